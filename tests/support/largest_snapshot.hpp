#pragma once
// The largest tracker state there can be (every list of proto::TrackerSnapshot full, the longest
// run id), with distinct keys: what a state file or a replica's etcd key must be able to hold.

#include <cstdint>

#include "loco/proto/tracker_snapshot.hpp"

namespace loco::test {

inline proto::PeerKey numbered_key(std::uint64_t n) {
  proto::PeerKey key{};
  for (int i = 0; i < 8; ++i) key.bytes[i] = static_cast<std::uint8_t>(n >> (8 * i));
  key.bytes[31] = 0x5a;
  return key;
}

inline proto::TrackerSnapshot largest_snapshot() {
  using proto::TrackerSnapshot;
  TrackerSnapshot s;
  s.run_id = std::string(proto::kMaxTextBytes, 'r');
  s.genesis = Digest{};
  s.committed_round = TrackerSnapshot::kMaxHistory;
  for (std::uint64_t r = 1; r <= TrackerSnapshot::kMaxHistory; ++r)
    s.history.push_back({.round = r, .unix_ms = r, .group_size = 4, .mean_loss = 1.5f});
  for (std::uint64_t i = 0; i < TrackerSnapshot::kMaxLostRounds; ++i)
    s.lost_rounds.push_back({.first = i, .last = i, .went_back_to = i, .unix_ms = i});
  for (std::uint64_t i = 0; i < TrackerSnapshot::kMaxHeldAgainst; ++i) {
    s.barred.push_back({.key = numbered_key(i), .remaining_ms = i});
    s.benched.push_back({.key = numbered_key(i), .until = i, .times = 1});
    s.disputes.push_back({.first = numbered_key(2 * i), .second = numbered_key(2 * i + 1)});
  }
  for (std::uint64_t i = 0; i < proto::kMaxMembers; ++i) s.members.push_back(numbered_key(i));
  return s;
}

}  // namespace loco::test
