// The strategies in the simulator (sim/strategy_process.hpp): DiLoCo, Streaming DiLoCo, its eager
// updates, DeMo, DDP and SparseLoCo train a small GPT through loco-peer's SwarmGroup over simulated
// links, under random fault schedules (crashes, vanished hosts, clean leaves, the tracker's crash
// and restart), with the invariants of ledger.hpp checked as the run goes.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loco/core/rng.hpp"
#include "loco/sim/strategy_process.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "strategy_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::failures;
using test::finished_states;
using test::strategy_swarm;
using test::tiny_run;

class SimStrategies : public testing::TestWithParam<std::string> {
 protected:
  // The compute threads log as loco-peer does (fetches, aborted rounds): only warnings here.
  void SetUp() override {
    spdlog::set_level(std::getenv("LOCO_SIM_LOG") ? spdlog::level::info : spdlog::level::warn);
  }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

TEST_P(SimStrategies, PeersTrainThroughLocoPeersGroupAndEndIdentical) {
  const std::uint64_t seed = 11;
  test::print_seed(seed);
  Swarm swarm(strategy_swarm(seed, 3, tiny_run(GetParam(), 60)));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  // DiLoCo and Streaming a round every H / P steps at least, DDP and DeMo every step.
  EXPECT_TRUE(failures(swarm, 5, 60).empty()) << failures(swarm, 5, 60);
  const auto votes = finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

// Three strategy peers of log-normal speeds (σ 0.6) in a DiLoCo run of 60 steps, H = 10, whose
// rounds `timed` bounds by time.
SwarmConfig unequal_speeds(std::uint64_t seed,
                           const std::function<void(train::StrategySection&)>& timed) {
  test::print_seed(seed);
  train::TrainConfig config = tiny_run("diloco", 60)->config;
  timed(config.strategy);
  SwarmConfig c = strategy_swarm(seed, 3, std::make_shared<StrategyRun>(config));
  c.step_time_spread = 0.6;
  return c;
}

// DiLoCo's rounds over loco-peer's group hold no fp32 vector of their own: Δ is written into the
// inner loop's gradient arena and lent to the core, which encodes it, and the mean stays encoded
// (proto/peer_core.hpp). Six rounds, no buffer from the group's pool.
TEST(SimDiLoCoMemory, RoundsTakeNoFp32BufferForDeltaOrTheMean) {
  const std::uint64_t seed = 12;
  test::print_seed(seed);
  SwarmConfig config = strategy_swarm(seed, 3, tiny_run("diloco", 60));
  config.all_reduce = proto::AllReduceAlgorithm::direct;  // loco-peer's default
  Swarm swarm(config);
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  ASSERT_TRUE(failures(swarm, 5, 60).empty()) << failures(swarm, 5, 60);
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    ASSERT_TRUE(swarm.peer(i).process()->finished()) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).process()->update_buffers(), 0u) << "peer " << i;
  }
}

// Rounds bounded by time with peers of unequal speeds (log-normal step times): each peer takes the
// steps it manages in a round, the ledger checks every round's mean against the token-weighted
// mean of the members' updates, and every peer ends with the same state.
TEST(SimTimedRounds, PeersOfUnequalSpeedsTrainTheStepsTheyManageAndEndIdentical) {
  spdlog::set_level(spdlog::level::warn);
  Swarm swarm(unequal_speeds(12, [](train::StrategySection& s) {
    s.round_seconds = 1.0;  // nominal H = 10 steps of 100 ms
  }));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(test::violations(swarm), "");
  EXPECT_GE(swarm.rounds_committed(), 6u) << "the run's 6 rounds, train.steps / diloco-h";
  std::uint64_t fewest = std::numeric_limits<std::uint64_t>::max(), most = 0;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).held_round(), 6u) << "peer " << i;
    fewest = std::min(fewest, swarm.peer(i).process()->steps());
    most = std::max(most, swarm.peer(i).process()->steps());
  }
  EXPECT_GT(static_cast<double>(most), 1.25 * static_cast<double>(fewest))
      << "the peers' speeds differ: " << fewest << " to " << most << " steps";
  const auto votes = finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

// Rounds paced by the tracker with peers of unequal speeds: from the members' measured step times
// the tracker sets the phase to H × the median member's step time (the simulator's tracker runs
// loco-tracker's core), so the median peer takes about H steps a round, the fastest more and the
// slowest fewer; the ledger checks every weighted mean and every peer ends with the same state.
TEST(SimTimedRounds, TheTrackerPacesThePhaseAtHTimesTheMedianStepTime) {
  spdlog::set_level(spdlog::level::warn);
  Swarm swarm(unequal_speeds(13, [](train::StrategySection& s) {
    s.tracker_paced = true;  // H = 10 steps of the median peer
  }));
  swarm.start();
  // Once three rounds are in, each member has measured its steps at least once.
  for (int i = 0; i < 60 && swarm.rounds_committed() < 3; ++i)
    ASSERT_TRUE(swarm.run_for(seconds(1)));
  ASSERT_GE(swarm.rounds_committed(), 3u);
  std::vector<std::pair<Duration, std::size_t>> speeds;  // step time, peer
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    speeds.emplace_back(swarm.peer(i).process()->step_time(), i);
  std::sort(speeds.begin(), speeds.end());
  const double median_step = std::chrono::duration<double>(speeds[1].first).count();
  EXPECT_NEAR(swarm.tracker().core()->status(swarm.loop().now()).round_seconds, 10 * median_step,
              1e-3)
      << "H x the median step time";
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(test::violations(swarm), "");
  EXPECT_GE(swarm.rounds_committed(), 6u) << "the run's 6 rounds, train.steps / diloco-h";
  std::vector<std::uint64_t> steps;  // fastest first
  for (const auto& [step_time, i] : speeds) {
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).held_round(), 6u) << "peer " << i;
    steps.push_back(swarm.peer(i).process()->steps());
  }
  EXPECT_GT(steps[0], steps[1]) << "the fastest takes more steps than the median";
  EXPECT_GT(steps[1], steps[2]) << "the slowest fewer";
  EXPECT_GE(steps[1], 54u) << "the median peer about H a round";
  EXPECT_LE(steps[1], 80u) << "the median peer about H a round";
  const auto votes = finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

// Four peers, peer 0 three times slower than the others (100 ms a step, its 300), in a DiLoCo run
// of `rounds` rounds of H = 20 whose [strategy] says nothing of time: the defaults a swarm's run
// config gets (apply_swarm_defaults: loco-peer and loco-tracker apply them), over 20 Mbit/s links
// 25 ms one way, so that fetching the state (θ ‖ v) outlasts a slow step.
SwarmConfig one_slow_peer_with_the_defaults(std::uint64_t seed, std::uint64_t rounds) {
  test::print_seed(seed);
  train::TrainConfig config = tiny_run("diloco", rounds * 20)->config;
  config.strategy.diloco_h = 20;
  train::apply_swarm_defaults(config);
  SwarmConfig c = strategy_swarm(seed, 4, std::make_shared<StrategyRun>(config));
  c.slow_tail = 0.01;  // peer 0 of 0..3
  c.slow_tail_factor = 3;
  c.links.latency_min = c.links.latency_max = milliseconds(25);
  c.links.bandwidth_min = c.links.bandwidth_max = 20'000'000;
  return c;
}

// The slow peer's share of the swarm's compute: (1/3) / (3 + 1/3).
constexpr double kSlowComputeShare = 0.1;

// With the defaults, a peer 3x slower neither holds the others back (they take about 3 times its
// steps: the tracker paces the rounds) nor is thrown out of the rounds (it is in every round after
// the first with the steps it managed, weighed by its tokens: left out of the first, whose phase
// no one had measured, it takes the state the run resyncs it to at its next step, its phase
// counted from that resync, and is in the second; before, it trained out its H steps of its own on
// the state the run had left first and sat out the second too: in 10 of 12 rounds). Before (issue
// 49), a run of the
// defaults made a round every H steps, and the fast peers waited for the slow one each round (a
// third of their compute); with pacing asked for, the slow peer, once left out, fetched the state
// and counted its phase from the fetch's end: late by the fetch every round, it was in none.
TEST(SimTimedRounds, AThreeTimesSlowerPeerUnderTheDefaultsIsInTheRoundsWithItsTokens) {
  spdlog::set_level(spdlog::level::warn);
  Swarm swarm(one_slow_peer_with_the_defaults(14, 12));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(120)));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(test::violations(swarm), "");
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
  const StrategyProcess& slow = *swarm.peer(0).process();
  const auto rounds = static_cast<double>(swarm.rounds_committed());
  EXPECT_GE(rounds, 12.0);
  for (std::size_t i = 1; i < swarm.peer_count(); ++i)
    EXPECT_GT(static_cast<double>(swarm.peer(i).process()->steps()),
              2.0 * static_cast<double>(slow.steps()))
        << "peer " << i << " waited for the slow one";
  EXPECT_GE(static_cast<double>(slow.rounds_committed()), rounds - 1) << "it sat rounds out";
  EXPECT_GE(slow.shares() / rounds, 0.8 * kSlowComputeShare) << "its tokens' share of the run";
  const auto votes = finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 4u);
}

// The slow peer killed mid-run and restarted at once: it joins, fetches the run's state, and is
// in the rounds again, with its tokens, from the round after the one it was killed in. Its first
// phase after the join lasts the tracker's phase, which the join's resync carries, counted from
// that resync (DiLoCo::joined_paced), so it ends about with the others'. Before, that phase was H
// steps of its own, three rounds' time at 3x the median's step: it sat out three rounds after
// its return (seen with this seed: in 7 of the 10 rounds after). Before that, counting its phase
// from each fetch's end, it was late by the fetch at every round and never finished.
TEST(SimTimedRounds, ARestartedSlowPeerIsInTheRoundsFromTheOneAfterItsReturn) {
  spdlog::set_level(spdlog::level::warn);
  Swarm swarm(one_slow_peer_with_the_defaults(15, 16));
  std::uint64_t back_at = 0;  // the run's rounds when it restarted
  swarm.loop().at(TimePoint(seconds(15)), [&swarm, &back_at] {
    back_at = swarm.rounds_committed();
    swarm.restart_peer(0, false);
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(150)));
  spdlog::set_level(spdlog::level::info);
  EXPECT_EQ(test::violations(swarm), "");
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
  const std::uint64_t after = swarm.rounds_committed() - back_at;
  ASSERT_GE(after, 8u) << "restarted at round " << back_at;
  const StrategyProcess& slow = *swarm.peer(0).process();
  EXPECT_GE(slow.rounds_committed() + 1, after) << "restarted at round " << back_at;
  EXPECT_GE(slow.shares() / static_cast<double>(after), 0.4 * kSlowComputeShare);
}

// The faults that struck, and when the last one did.
struct FaultTally {
  std::uint64_t struck = 0;
  TimePoint last{};
};

// A fault every ~10 s of virtual time, each undone a little later, until the run is 90% through
// its rounds (the tracker's committed round against the run's final round: as in issue 49's real
// runs, the faults stop a few rounds before the end). A peer back after the others have ended and
// left fetches the final state from the tracker's custody copy and ends too.
std::shared_ptr<FaultTally> schedule_strategy_faults(Swarm& swarm, std::uint64_t seed,
                                                     const StrategyRun& run) {
  Rng rng(counter_u64(seed, 0x6661756c74ULL, 0));  // "fault"
  EventLoop& loop = swarm.loop();
  const std::size_t peers = swarm.peer_count();
  auto tally = std::make_shared<FaultTally>();
  // `fault` at `t` if the run is not yet past the round its faults stop at (the undoing of a fault
  // always happens).
  const auto strike = [&swarm, &loop, tally, last = train::final_round(run.config) * 9 / 10](
                          TimePoint t, std::function<void()> fault) {
    loop.at(t, [&swarm, &loop, tally, last, fault = std::move(fault)] {
      if (swarm.tracker().committed().first >= last) return;
      ++tally->struck;
      tally->last = loop.now();
      fault();
    });
  };
  for (TimePoint t = TimePoint(seconds(5)); t < TimePoint(std::chrono::minutes(10));
       t += milliseconds(1 + rng.below(20'000))) {
    const std::size_t i = rng.below(peers);
    const Duration hold = milliseconds(500 + rng.below(10'000));
    switch (rng.below(5)) {
      case 0:  // SIGKILL, back later (from the genesis: it fetches the run's state)
      case 1:  // the host vanishes, back later
        strike(t, [&swarm, i, notify = rng.below(2) == 0] { swarm.crash_peer(i, notify); });
        loop.at(t + hold, [&swarm, i] {
          if (!swarm.peer_up(i)) swarm.start_peer(i);
        });
        break;
      case 2:  // a clean leave, back later
        strike(t, [&swarm, i] { swarm.leave_peer(i); });
        loop.at(t + hold + seconds(3), [&swarm, i] {
          if (!swarm.peer_up(i)) swarm.start_peer(i);
        });
        break;
      case 3:  // the tracker crashes and restarts from its disk
        strike(t, [&swarm] {
          if (swarm.tracker().up()) swarm.crash_tracker();
        });
        loop.at(t + hold / 4, [&swarm] {
          if (!swarm.tracker().up()) swarm.restart_tracker();
        });
        break;
      default:  // a kill at once restarted: mid-phase, whatever the phase is
        strike(t, [&swarm, i] { swarm.restart_peer(i, false); });
        break;
    }
  }
  return tally;
}

TEST_P(SimStrategies, RandomFaultSchedulesKeepEveryInvariant) {
  constexpr std::uint64_t kSteps = 300;
  for (const std::uint64_t seed : test::seeds(21, 2)) {  // LOCO_SIM_SEEDS=N: more
    test::print_seed(seed);
    const auto run = tiny_run(GetParam(), kSteps);
    SwarmConfig config = strategy_swarm(seed, 4, run);
    config.links.latency_min = milliseconds(5);
    config.links.latency_max = milliseconds(40);
    config.links.bandwidth_min = 20'000'000;
    config.links.bandwidth_max = 200'000'000;
    config.chunk_values = 2048;
    config.step_time = milliseconds(250);
    config.step_time_spread = 0.3;
    Swarm swarm(config);
    const auto faults = schedule_strategy_faults(swarm, seed, *run);
    double end_seconds = 0;  // the last commit's virtual time
    swarm.watch_tracker([&swarm, &end_seconds](const proto::TrackerEvent& e) {
      if (e.kind == proto::TrackerEvent::Kind::round_committed)
        end_seconds = std::chrono::duration<double>(swarm.loop().now().time_since_epoch()).count();
    });
    swarm.start();
    EXPECT_TRUE(swarm.run_for(std::chrono::minutes(10), 5'000'000)) << "a livelock?";
    std::printf(
        "[ SIM SEED ] %llu: %llu rounds committed, %llu aborted, %llu evictions, final round %llu "
        "at %.1f s, %llu faults (the last at %.1f s), %llu states lost to faults\n",
        static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(swarm.rounds_committed()),
        static_cast<unsigned long long>(swarm.rounds_aborted()),
        static_cast<unsigned long long>(swarm.evictions()),
        static_cast<unsigned long long>(swarm.tracker().committed().first), end_seconds,
        static_cast<unsigned long long>(faults->struck),
        std::chrono::duration<double>(faults->last.time_since_epoch()).count(),
        static_cast<unsigned long long>(swarm.holding().lost_to_faults()));
    // A peer whose partners finished and left while it was a round behind waits for them in
    // its last round (docs/SCALE.md: the end of a run).
    const std::uint64_t last_round_steps = kSteps - 10;
    EXPECT_TRUE(failures(swarm, 10, last_round_steps).empty())
        << failures(swarm, 10, last_round_steps)
        << test::replay_hint(seed, "*SimStrategies.RandomFaultSchedulesKeepEveryInvariant/*");
  }
}

// DeMo's delayed apply: each step's all-gather runs while the next step computes. A member whose
// host vanishes in a step's all-gather fails that attempt and the survivors gather again without
// it (the ledger checks after every round that every peer installing it installs the same
// state); back later, it fetches θ with the pending update and ends with the others' state.
TEST(SimDemoLate, AMemberLostInAnAllGatherIsRetriedWithoutItAndComesBackEqual) {
  const std::uint64_t seed = 31;
  test::print_seed(seed);
  spdlog::set_level(spdlog::level::warn);
  constexpr std::uint64_t kSteps = 80;
  SwarmConfig config = strategy_swarm(seed, 3, tiny_run("demo-late", kSteps));
  config.links.latency_min = config.links.latency_max = milliseconds(20);
  Swarm swarm(config);
  EventLoop& loop = swarm.loop();
  // From 3 s on, peer 2's host vanishes at the first moment it is in an all-gather.
  TimePoint lost{};
  std::uint64_t lost_round = 0;
  std::function<void()> watch = [&] {
    if (swarm.peer_up(2) && swarm.peer(2).in_all_reduce()) {
      lost = loop.now();
      lost_round = swarm.peer(2).held_round() + 1;
      swarm.crash_peer(2, false);
      return;
    }
    loop.at(loop.now() + milliseconds(1), watch);
  };
  loop.at(TimePoint(seconds(3)), watch);
  loop.at(TimePoint(seconds(5)), [&swarm] { swarm.start_peer(2); });
  const std::uint64_t aborted_before = swarm.rounds_aborted();
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(60)));
  spdlog::set_level(spdlog::level::info);
  ASSERT_NE(lost, TimePoint{}) << "peer 2 was never seen in an all-gather";
  EXPECT_GT(lost_round, 1u);
  EXPECT_GT(swarm.rounds_aborted(), aborted_before) << "the lost member's attempt was aborted";
  EXPECT_TRUE(failures(swarm, kSteps, kSteps).empty()) << failures(swarm, kSteps, kSteps);
  const auto votes = finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

// The virtual time 3 peers take for `steps` DeMo steps of 100 ms over 50 ms links, blocking or
// with the delayed apply overlapped (the simulator charges compute only for the steps).
TimePoint demo_finish_time(const std::string& kind, std::uint64_t steps) {
  SwarmConfig config = strategy_swarm(41, 3, tiny_run(kind, steps));
  config.links.latency_min = config.links.latency_max = milliseconds(50);
  Swarm swarm(config);
  swarm.start();
  const auto finished = [&swarm] {
    std::size_t n = 0;
    for (const auto& [hash, peers] : finished_states(swarm)) n += peers;
    return n;
  };
  // Until all three have done their steps, to a tenth of a second, within a minute.
  for (int i = 0; i < 600 && finished() < 3; ++i)
    if (!swarm.run_for(milliseconds(100))) break;
  const auto votes = finished_states(swarm);
  EXPECT_EQ(votes.size(), 1u) << kind;
  EXPECT_EQ(finished(), 3u) << kind;
  return swarm.loop().now();
}

double seconds_of(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// A blocking DeMo step lasts its compute plus a round (ready, all-gather, done, commit);
// overlapped, the round of step t runs while step t + 1 computes: the same steps take less virtual
// time.
TEST(SimDemoLate, TheOverlappedRoundsRunWhileTheNextStepComputes) {
  spdlog::set_level(spdlog::level::warn);
  constexpr std::uint64_t kSteps = 40;
  const TimePoint blocking = demo_finish_time("demo", kSteps);
  const TimePoint overlapped = demo_finish_time("demo-late", kSteps);
  spdlog::set_level(spdlog::level::info);
  const double compute_s = 0.1 * kSteps;
  std::printf(
      "[ DEMO ] %llu steps of 100 ms, 50 ms links: blocking %.2f s (util %.3f), "
      "overlapped %.2f s (util %.3f)\n",
      static_cast<unsigned long long>(kSteps), seconds_of(blocking),
      compute_s / seconds_of(blocking), seconds_of(overlapped), compute_s / seconds_of(overlapped));
  EXPECT_LT(seconds_of(overlapped), 0.8 * seconds_of(blocking));
}

// Threads take turns with the event loop: a run is still a function of its seed.
TEST(SimStrategyReplay, TheSameSeedGivesTheSameTraceAndStates) {
  const std::uint64_t seed = 23;
  test::print_seed(seed);
  std::vector<std::pair<std::uint64_t, std::vector<Digest>>> runs;
  for (int run = 0; run < 2; ++run) {
    const auto streaming = tiny_run("streaming", 120);
    SwarmConfig config = strategy_swarm(seed, 3, streaming);
    config.links.latency_max = milliseconds(30);
    config.step_time_spread = 0.3;
    Swarm swarm(config);
    schedule_strategy_faults(swarm, seed, *streaming);
    swarm.start();
    ASSERT_TRUE(swarm.run_for(std::chrono::minutes(2)));
    std::vector<Digest> held;
    for (std::size_t i = 0; i < swarm.peer_count(); ++i)
      if (swarm.peer_up(i)) held.push_back(swarm.peer(i).held_hash());
    runs.emplace_back(swarm.loop().trace_hash(), held);
  }
  EXPECT_EQ(runs[0], runs[1]) << test::replay_hint(seed, "SimStrategyReplay.*");
}

INSTANTIATE_TEST_SUITE_P(EveryStrategy, SimStrategies,
                         testing::Values("diloco", "streaming", "eager", "demo", "ddp",
                                         "sparseloco"));

}  // namespace
}  // namespace loco::sim
