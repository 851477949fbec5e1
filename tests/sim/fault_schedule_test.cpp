// Random fault schedules over many seeds (crashes, restarts with and without the checkpoint,
// vanished hosts, clean leaves, partitions, one-way blocks, tracker crashes and restarts), the
// invariants of ledger.hpp checked as the run goes, and replay: the same seed gives the same
// trace hash. The same schedules with one member of six lying (behaviour.hpp, one attack a seed)
// over the direct exchange with the default trim: the same invariants hold, and the honest
// members' states stay finite. CI runs a bounded number of seeds; LOCO_SIM_SEEDS=N runs more,
// LOCO_SIM_SEED=S replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::size_t kPeers = 6;
constexpr Duration kFaultPhase = std::chrono::hours(2);
// A liar lies from the first round to the last: an hour of faults shows what two would, in half
// the time (CI's time is bounded).
constexpr Duration kFaultPhaseWithALiar = std::chrono::hours(1);
constexpr Duration kQuiet = std::chrono::minutes(10);  // all healed and restarted: recover

// Each seed's liar, when the schedule has one: peer 0 with one of the attacks in turn.
constexpr Behaviour kAttacks[] = {Behaviour::scaled, Behaviour::sign_flipped,   Behaviour::random,
                                  Behaviour::stale,  Behaviour::zero_then_huge, Behaviour::accuser};

SwarmConfig fault_swarm(std::uint64_t seed, bool liar) {
  SwarmConfig c;
  c.seed = seed;
  c.peers = kPeers;
  c.links.latency_min = milliseconds(5);
  c.links.latency_max = milliseconds(80);
  c.links.jitter = milliseconds(2);
  c.links.loss = 0.01;
  c.links.bandwidth_min = 20'000'000;
  c.links.bandwidth_max = 200'000'000;
  c.compute.dim = 4096;
  c.compute.inner_steps = 20;
  c.step_time = milliseconds(500);
  c.step_time_spread = 0.3;
  c.chunk_values = 512;
  c.tracker.custody.every = 10;  // loco-tracker's default: the tracker holds a copy too
  c.check_holding = true;        // holding_check.hpp
  // Both ways a group averages, by the seed's parity: the direct exchange is loco-peer's default.
  c.all_reduce =
      seed % 2 == 0 ? proto::AllReduceAlgorithm::direct : proto::AllReduceAlgorithm::ring;
  if (liar) {
    c.all_reduce = proto::AllReduceAlgorithm::direct;  // the ring cannot trim (docs/SECURITY.md)
    c.tracker.trim = 0.25f;
    c.behaviours = {{0, kAttacks[seed % std::size(kAttacks)]}};
  }
  return c;
}

// One random schedule: a fault every ~2 minutes on average, each undone a little later.
void schedule_faults(Swarm& swarm, std::uint64_t seed, Duration faults) {
  Rng rng(counter_u64(seed, 0x6661756c74ULL, 0));  // "fault"
  EventLoop& loop = swarm.loop();
  for (TimePoint t = TimePoint(seconds(30)); t < TimePoint(faults);
       t += Duration(static_cast<Duration::rep>(rng.below(240'000)) * 1'000'000)) {
    const std::size_t i = rng.below(kPeers);
    const Duration hold = seconds(5 + rng.below(120));
    switch (rng.below(8)) {
      case 0:  // SIGKILL, back later with its checkpoint
        loop.at(t, [&swarm, i] { swarm.crash_peer(i, true); });
        loop.at(t + hold, [&swarm, i] {
          if (!swarm.peer_up(i)) swarm.restart_peer(i, true);
        });
        break;
      case 1:  // the host vanishes, back later with nothing
        loop.at(t, [&swarm, i] { swarm.crash_peer(i, false); });
        loop.at(t + hold, [&swarm, i] {
          if (!swarm.peer_up(i)) swarm.restart_peer(i, false);
        });
        break;
      case 2:  // a clean leave, back later
        loop.at(t, [&swarm, i] { swarm.leave_peer(i); });
        loop.at(t + hold + seconds(3), [&swarm, i] {
          if (!swarm.peer_up(i)) swarm.restart_peer(i, true);
        });
        break;
      case 3: {  // a partition: the peer alone on the other side
        const NodeId node = swarm.peer_node(i);
        loop.at(t, [&swarm, node] { swarm.network().reachability().place(node, 1); });
        loop.at(t + hold, [&swarm, node] { swarm.network().reachability().place(node, 0); });
        break;
      }
      case 4: {  // one way: the peer hears the others but they do not hear it
        const NodeId node = swarm.peer_node(i);
        const NodeId other = swarm.peer_node((i + 1) % kPeers);
        loop.at(t, [&swarm, node, other] { swarm.network().reachability().block(node, other); });
        loop.at(t + hold,
                [&swarm, node, other] { swarm.network().reachability().unblock(node, other); });
        break;
      }
      case 5:  // the tracker crashes and restarts from its disk
        test::crash_tracker_at(swarm, t, hold / 4);
        break;
      default:  // a kill at once restarted: mid-phase, whatever the phase is
        loop.at(t, [&swarm, i] { swarm.restart_peer(i, true); });
        break;
    }
  }
  loop.at(TimePoint(faults), [&swarm] {
    swarm.network().reachability().heal();
    if (!swarm.tracker().up()) swarm.restart_tracker();
    for (std::size_t i = 0; i < kPeers; ++i)
      if (!swarm.peer_up(i)) swarm.restart_peer(i, true);
  });
}

struct Outcome {
  std::uint64_t trace = 0;
  std::uint64_t rounds = 0;
  std::uint64_t lost = 0;  // the run's state lost to faults (holding_check.hpp)
  std::string failure;     // empty: every invariant held
};

Outcome run_schedule(std::uint64_t seed, bool liar = false) {
  Swarm swarm(fault_swarm(seed, liar));
  const Duration faults = liar ? kFaultPhaseWithALiar : kFaultPhase;
  schedule_faults(swarm, seed, faults);
  swarm.start();
  Outcome out;
  if (!swarm.run_until(TimePoint(faults + kQuiet), 20'000'000)) {
    out.failure = "the event budget ran out (a livelock?)\n";
  }
  out.failure += test::violations(swarm);
  // After the quiet phase every peer holds the run's state: the majority's, finite.
  const auto states = test::live_states(swarm);
  std::map<Digest, std::size_t> votes;
  for (const auto& [i, s] : states) ++votes[s.second];
  for (std::size_t i = 0; i < kPeers; ++i)
    if (swarm.peer_up(i))
      for (const float x : swarm.peer(i).state().theta)
        if (!std::isfinite(x)) {
          out.failure += "  peer " + std::to_string(i) + " holds a value that is not finite\n";
          break;
        }
  if (votes.size() != 1)
    out.failure +=
        "  after recovery the peers hold " + std::to_string(votes.size()) + " different states\n";
  out.trace = swarm.loop().trace_hash();
  out.rounds = swarm.rounds_committed();
  out.lost = swarm.holding().lost_to_faults();
  if (out.rounds < 10) out.failure += "  only " + std::to_string(out.rounds) + " rounds\n";
  return out;
}

// `n` seeds (each is 10-20 s under the sanitizers: CI's time is bounded), or the environment's.
std::vector<std::uint64_t> seeds(std::uint64_t n = 4) {
  return test::seeds(1001, n);
}

TEST(SimFaults, RandomSchedulesKeepEveryInvariant) {
  for (const std::uint64_t seed : seeds()) {
    test::print_seed(seed);
    const Outcome out = run_schedule(seed);
    std::printf(
        "[ SIM SEED ] %llu: %llu rounds committed, %llu states lost to faults, trace %016llx\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(out.rounds),
        static_cast<unsigned long long>(out.lost), static_cast<unsigned long long>(out.trace));
    EXPECT_TRUE(out.failure.empty())
        << out.failure << test::replay_hint(seed, "SimFaults.RandomSchedulesKeepEveryInvariant");
  }
}

// A GoogleTest name for an attack: "sign-flipped" as sign_flipped.
std::string test_name(Behaviour attack) {
  std::string out(name(attack));
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

// One test per attack, so that CI runs them side by side: the seeds whose attack it is.
class SimFaultsWithALiar : public ::testing::TestWithParam<Behaviour> {};

TEST_P(SimFaultsWithALiar, RandomSchedulesKeepEveryInvariant) {
  const std::string filter =
      "*SimFaultsWithALiar.RandomSchedulesKeepEveryInvariant/" + test_name(GetParam());
  for (const std::uint64_t seed : seeds(std::size(kAttacks))) {
    if (kAttacks[seed % std::size(kAttacks)] != GetParam()) continue;
    test::print_seed(seed);
    const Outcome out = run_schedule(seed, /*liar=*/true);
    std::printf("[ SIM SEED ] %llu, peer 0 %s: %llu rounds committed\n",
                static_cast<unsigned long long>(seed), std::string(name(GetParam())).c_str(),
                static_cast<unsigned long long>(out.rounds));
    EXPECT_TRUE(out.failure.empty()) << out.failure << test::replay_hint(seed, filter);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAttack, SimFaultsWithALiar, ::testing::ValuesIn(kAttacks),
                         [](const auto& p) { return test_name(p.param); });

TEST(SimFaults, TheSameSeedGivesTheSameTrace) {
  const std::uint64_t seed = seeds().front();
  test::print_seed(seed);
  const Outcome a = run_schedule(seed);
  const Outcome b = run_schedule(seed);
  EXPECT_EQ(a.trace, b.trace) << test::replay_hint(seed, "SimFaults.TheSameSeedGivesTheSameTrace");
  EXPECT_EQ(a.rounds, b.rounds);
  EXPECT_NE(run_schedule(seed + 1).trace, a.trace);
}

}  // namespace
}  // namespace loco::sim
