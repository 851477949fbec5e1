#pragma once
// A tracker's status filled by hand: three peers in round 41 of a run, with a loss history.

#include <cmath>
#include <string>

#include "loco/proto/tracker_status.hpp"

namespace loco::test {

inline proto::TrackerStatus sample_status() {
  proto::TrackerStatus s;
  s.run_id = "gpt-small-demo";
  s.epoch = 7;
  s.committed_round = 40;
  s.committed_hash = "7d1e0c9a4f3b2a8866c5e91d04f7ab3e5c2d9f8a1b6e4c7d3a0f5e2b9c8d1a64";
  s.next_round = 41;
  s.phase = "round 41 running (attempt 1)";
  s.attempt = 1;
  s.rounds_committed = 40;
  s.rounds_aborted = 2;
  s.peers_joined = 4;
  s.peers_refused = 1;
  s.peers_evicted = 1;
  s.members_reachable = 2;
  s.members_unreachable = 1;
  const char* const ids[] = {"3f9a1c0b77e2", "a41d09e5c3b8", "c07b52f1d96a"};
  const char* const addresses[] = {"203.0.113.10:7701", "198.51.100.23:7701", "[2001:db8::7]:7701"};
  for (std::uint32_t i = 0; i < 3; ++i) {
    proto::MemberStatus m;
    m.peer_id = ids[i];
    m.public_key = std::string(ids[i]) + std::string(52, '0');
    m.address = addresses[i];
    m.shard = i;
    m.joined_s_ago = 3600.0 + 60 * i;
    m.last_seen_s_ago = 0.4 + 1.1 * i;
    m.state_round = 40;
    m.in_sync = i != 2;
    m.in_round = i != 2;
    m.reachability = i != 2 ? proto::Reachability::reachable : proto::Reachability::unreachable;
    m.last = proto::Heartbeat{.state_round = 40,
                              .inner_step = 20'000 + 17 * i,
                              .loss = 2.61f + 0.03f * static_cast<float>(i),
                              .tokens_per_s = 9'400.0f - 700.0f * static_cast<float>(i),
                              .bytes_sent = 1'250'000'000ull + 90'000'000ull * i,
                              .bytes_received = 1'190'000'000ull + 75'000'000ull * i,
                              .network_wait_s = 0.8f + 0.2f * static_cast<float>(i),
                              .bytes_relayed = i == 0 ? 5'000'000ull : 0,
                              .sketch = {}};
    s.members.push_back(m);
    s.bytes_sent += m.last.bytes_sent;
    s.bytes_received += m.last.bytes_received;
    s.bytes_relayed += m.last.bytes_relayed;
    s.tokens_per_s += m.last.tokens_per_s;
  }
  for (std::uint64_t round = 1; round <= 40; ++round) {
    const double r = static_cast<double>(round);
    s.history.push_back(proto::RoundRecord{
        .round = round,
        .unix_ms = 1'700'000'000'000ull + 90'000ull * round,
        .group_size = round < 12 ? 2u : 3u,
        .mean_loss = static_cast<float>(2.55 + 3.0 * std::exp(-r / 9.0) + 0.04 * std::sin(r)),
        .state_hash = {}});
  }
  return s;
}

// `s` as the leading replica tracker-b (term 812) of three serves it: it took over from tracker-a
// (term 640), which came back later and waits with the youngest key.
inline proto::TrackerStatus with_replicas(proto::TrackerStatus s) {
  s.replica = "tracker-b";
  s.replica_term = 812;
  s.leading_since_ms = 1'790'000'000'000;
  s.replicas = {{.name = "tracker-b", .term = 812, .leads = true},
                {.name = "tracker-c", .term = 815, .leads = false},
                {.name = "tracker-a", .term = 1204, .leads = false}};
  s.last_failover = {.unix_ms = 1'789'999'999'950,
                     .from = "tracker-a",
                     .from_term = 640,
                     .to_term = 812,
                     .leaderless_ms = 2'400};
  return s;
}

}  // namespace loco::test
