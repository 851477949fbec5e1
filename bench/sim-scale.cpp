// The simulator at scale (docs/SCALE.md): 1,000 volunteers for one virtual hour, 10% churn per
// hour, one-way latencies 20-200 ms, access links 10-1,000 Mbit/s, in all-reduce mode (one
// all-reduce per round over the group the tracker forms) or, with --gossip G, in gossip mode
// (groups of G).
// Prints progress to stderr and, as its last line:
//   sim-scale: peers=1000 virtual_s=3600 wall_s=... speedup=... rounds=... gossip_spread=...
//              tracker_events_per_s=...
// rounds: rounds the tracker committed (all-reduce) or the live peers' mean round (gossip);
// gossip_spread: the live peers' RMS distance from their mean per value (n/a in all-reduce mode,
// where it is 0 by construction); tracker_events_per_s: the tracker core's inputs (messages,
// disconnects, timers) per virtual second, the load a real tracker would see.
//
// Options: --peers N --seconds S --churn F (per hour) --dim D --step-ms MS --step-spread S (σ of
// the log of a peer's step time) --seed N --gossip G --gossip-wait SECONDS --all-reduce ring|direct
// (how each group averages; ring by default) --unreachable F (the share of the starting peers
// behind a NAT, every peer whose index mod 100 is below 100 F; peers churn adds are reachable)
// --relay-pairs P (each reachable peer's relay budget, proto/relay_core.hpp) --max-relayed-links L
// (the tracker's cap per group, 0: none) --slow-tail F (the share of peers 10x slower on top of
// the spread) --phase-seconds S (phases clocked by time: each peer takes the steps that fit in S,
// as strategy.round-seconds; 0: H = 100 steps) --log-rounds 1 (print the tracker's round events
// and notices, with their virtual time). With --unreachable, a second line reports the
// relays:
//   sim-relays: unreachable=... relayed_links=... relays_blamed=... left_out=... mean_group=...
//               relayed_mib_per_reachable_peer=... max_relayed_mib=...
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "loco/sim/swarm.hpp"

namespace {

struct Options {
  std::size_t peers = 1000;
  std::uint64_t seconds = 3600;
  double churn = 0.10;
  std::size_t dim = 16384;
  std::uint64_t step_ms = 600;
  double step_spread = 0.2;
  std::uint64_t seed = 1;
  std::size_t gossip = 0;
  std::uint64_t gossip_wait_s = 600;
  std::string all_reduce = "ring";
  double unreachable = 0;
  std::uint32_t relay_pairs = 4;
  std::uint32_t max_relayed_links = 0;
  double slow_tail = 0;
  std::uint64_t phase_seconds = 0;
  bool log_rounds = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--peers")
      o.peers = std::strtoull(value, nullptr, 10);
    else if (flag == "--seconds")
      o.seconds = std::strtoull(value, nullptr, 10);
    else if (flag == "--churn")
      o.churn = std::strtod(value, nullptr);
    else if (flag == "--dim")
      o.dim = std::strtoull(value, nullptr, 10);
    else if (flag == "--step-ms")
      o.step_ms = std::strtoull(value, nullptr, 10);
    else if (flag == "--step-spread")
      o.step_spread = std::strtod(value, nullptr);
    else if (flag == "--seed")
      o.seed = std::strtoull(value, nullptr, 10);
    else if (flag == "--gossip-wait")
      o.gossip_wait_s = std::strtoull(value, nullptr, 10);
    else if (flag == "--gossip")
      o.gossip = std::strtoull(value, nullptr, 10);
    else if (flag == "--unreachable")
      o.unreachable = std::strtod(value, nullptr);
    else if (flag == "--relay-pairs")
      o.relay_pairs = static_cast<std::uint32_t>(std::strtoul(value, nullptr, 10));
    else if (flag == "--max-relayed-links")
      o.max_relayed_links = static_cast<std::uint32_t>(std::strtoul(value, nullptr, 10));
    else if (flag == "--slow-tail")
      o.slow_tail = std::strtod(value, nullptr);
    else if (flag == "--phase-seconds")
      o.phase_seconds = std::strtoull(value, nullptr, 10);
    else if (flag == "--all-reduce")
      o.all_reduce = value;
    else if (flag == "--log-rounds")
      o.log_rounds = std::strtoul(value, nullptr, 10) != 0;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return o;
}

// Gossip mode: the rounds of the live peers (each applies its own rounds), their mean and how far
// apart they are (the 10th and 90th percentiles).
struct PeerRounds {
  double mean = 0;
  std::uint64_t p10 = 0;
  std::uint64_t p90 = 0;
};

PeerRounds peer_rounds(const loco::sim::Swarm& swarm) {
  std::vector<std::uint64_t> rounds;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    if (swarm.peer_up(i)) rounds.push_back(swarm.peer(i).state().round);
  if (rounds.empty()) return {};
  std::sort(rounds.begin(), rounds.end());
  double sum = 0;
  for (const std::uint64_t r : rounds) sum += static_cast<double>(r);
  return PeerRounds{.mean = sum / static_cast<double>(rounds.size()),
                    .p10 = rounds[rounds.size() / 10],
                    .p90 = rounds[rounds.size() * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace loco;
  using std::chrono::milliseconds;
  const Options o = parse(argc, argv);

  sim::SwarmConfig c;
  c.seed = o.seed;
  c.peers = o.peers;
  c.links.latency_min = milliseconds(20);
  c.links.latency_max = milliseconds(200);
  c.links.bandwidth_min = 10'000'000;
  c.links.bandwidth_max = 1'000'000'000;
  c.tracker_link.latency = milliseconds(10);
  c.compute.dim = o.dim;
  c.compute.inner_steps = 100;
  c.step_time = milliseconds(o.step_ms);
  c.step_time_spread = o.step_spread;
  c.slow_tail = o.slow_tail;
  c.phase_time = std::chrono::seconds(o.phase_seconds);
  c.codec = "int8:block=256";
  c.gossip_group = o.gossip;
  // Only gossip mode's progress lines read the spread the tracker is handed: in all-reduce mode
  // its pass over every peer's state each minute would be 2% of the hour for nothing.
  if (o.gossip == 0) c.spread_every = {};
  c.all_reduce = proto::parse_all_reduce_algorithm(o.all_reduce);
  c.gossip_wait = std::chrono::seconds(o.gossip_wait_s);
  c.mean_tolerance = -1;  // the per-ring check of every mean costs O(members x dim) per peer
  c.relay = proto::RelayBudget{.max_pairs = o.relay_pairs, .max_bytes_per_attempt = 0};
  c.tracker.max_relayed_links = o.max_relayed_links;
  sim::Swarm swarm(c);
  std::vector<bool> natted(o.peers, false);
  for (std::size_t i = 0; i < o.peers; ++i) {
    natted[i] = static_cast<double>(i % 100) < o.unreachable * 100;
    if (natted[i]) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  }

  if (o.log_rounds) {
    swarm.watch_tracker([&swarm](const proto::TrackerEvent& e) {
      using Kind = proto::TrackerEvent::Kind;
      if (e.kind != Kind::round_formed && e.kind != Kind::round_committed &&
          e.kind != Kind::round_aborted && e.kind != Kind::notice)
        return;
      const double t = std::chrono::duration<double>(swarm.loop().now().time_since_epoch()).count();
      std::fprintf(stderr, "round-log t=%.3f %s\n", t, e.text.c_str());
    });
  }

  const auto wall_start = std::chrono::steady_clock::now();
  swarm.start();
  swarm.churn(o.churn);
  const std::uint64_t report_every = std::max<std::uint64_t>(60, o.seconds / 12);
  for (std::uint64_t t = 0; t < o.seconds; t += report_every) {
    const std::uint64_t span = std::min(report_every, o.seconds - t);
    if (!swarm.run_for(std::chrono::seconds(span))) {
      std::fprintf(stderr, "event budget exhausted at t=%llu s\n",
                   static_cast<unsigned long long>(t));
      return 1;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const proto::TrackerStatus status = swarm.tracker().core()->status(swarm.loop().now());
    // All-reduce mode: the tracker's rounds. Gossip mode: where the peers' own rounds stand.
    std::string progress;
    if (o.gossip == 0) {
      progress = fmt::format("rounds {} (aborted attempts {})", swarm.rounds_committed(),
                             swarm.rounds_aborted());
    } else {
      const PeerRounds rounds = peer_rounds(swarm);
      progress = fmt::format(
          "mean round {:.1f} (p10 {}, p90 {})  spread {:.4f} (tracker)  applied alone {} of {} "
          "(waits expired {})",
          rounds.mean, rounds.p10, rounds.p90, status.spread, swarm.ledger().applied_alone(),
          swarm.ledger().installs(), swarm.ledger().gossip_waits_expired());
    }
    std::fprintf(stderr, "%s\n",
                 fmt::format("t={:5} s  wall {:6.1f} s  members {:4}  {}  evictions {}  events {}  "
                             "messages {}",
                             t + span, wall, status.members.size(), progress, swarm.evictions(),
                             swarm.loop().events_run(), swarm.network().messages_delivered())
                     .c_str());
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (const std::string& v : swarm.ledger().violations())
    std::fprintf(stderr, "VIOLATION %s\n", v.c_str());
  if (o.unreachable > 0) {
    const proto::TrackerStatus status = swarm.tracker().core()->status(swarm.loop().now());
    double group_sum = 0;
    for (const auto& r : status.history) group_sum += r.group_size;
    std::uint64_t relayed = 0;
    std::uint64_t most = 0;
    std::size_t reachable = 0;
    for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
      if (!swarm.peer_up(i) || (i < natted.size() && natted[i])) continue;
      ++reachable;
      relayed += swarm.peer(i).bytes_relayed();
      most = std::max(most, swarm.peer(i).bytes_relayed());
    }
    std::printf(
        "sim-relays: unreachable=%llu relayed_links=%llu relays_blamed=%llu left_out=%llu "
        "mean_group=%.1f relayed_mib_per_reachable_peer=%.1f max_relayed_mib=%.1f\n",
        static_cast<unsigned long long>(status.members_unreachable),
        static_cast<unsigned long long>(status.relayed_links),
        static_cast<unsigned long long>(status.relays_blamed),
        static_cast<unsigned long long>(status.members_left_out),
        status.history.empty() ? 0.0 : group_sum / static_cast<double>(status.history.size()),
        reachable == 0 ? 0.0
                       : static_cast<double>(relayed) / static_cast<double>(reachable) / (1 << 20),
        static_cast<double>(most) / (1 << 20));
  }
  const std::string rounds = o.gossip != 0 ? std::to_string(peer_rounds(swarm).mean)
                                           : std::to_string(swarm.rounds_committed());
  const std::string spread = o.gossip != 0 ? std::to_string(swarm.spread()) : "n/a";
  std::printf(
      "sim-scale: peers=%zu virtual_s=%llu wall_s=%.1f speedup=%.1f rounds=%s gossip_spread=%s "
      "tracker_events_per_s=%.1f loss=%.5f\n",
      o.peers, static_cast<unsigned long long>(o.seconds), wall,
      static_cast<double>(o.seconds) / wall, rounds.c_str(), spread.c_str(),
      static_cast<double>(swarm.tracker().inputs()) / static_cast<double>(o.seconds),
      swarm.mean_loss());
  return swarm.ledger().violations().empty() ? 0 : 1;
}
