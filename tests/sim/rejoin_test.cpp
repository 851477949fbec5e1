// Peers that fall out of the run and come back, with real strategies in the simulator
// (sim/strategy_process.hpp), each case one of issue 49's fault runs made exact: a DiLoCo member
// whose round a fetched state replaces keeps its place in the run to the run's last round; a
// restarted DeMo member whose download of the state outlasts several rounds still gets back into
// the rounds.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>

#include "strategy_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SimRejoin : public testing::Test {
 protected:
  void SetUp() override {
    spdlog::set_level(std::getenv("LOCO_SIM_LOG") ? spdlog::level::info : spdlog::level::warn);
  }
  void TearDown() override { spdlog::set_level(spdlog::level::info); }
};

// Peer 2's reports stop reaching the tracker while its round is in the all-reduce, for 6 s: it
// has the mean and trains on from the state it leads to, the tracker evicts it and commits the
// round without it, and once heard again it joins again and fetches that round, which replaces
// its own between two steps. Its loop goes back to round × H once, so it is in the same round as
// the others to the end: it lands the run's final round after train.steps steps, as they do (the
// next round's start put the loop back H steps a second time, and the peer then started a round
// past the run's end, refused).
TEST_F(SimRejoin, ADiLoCoRoundReplacedBetweenTwoStepsKeepsThePeerInTheRunsRounds) {
  const std::uint64_t seed = 61;
  test::print_seed(seed);
  constexpr std::uint64_t kSteps = 100;  // H = 10: the run's final round is 10
  SwarmConfig config = test::strategy_swarm(seed, 3, test::tiny_run("diloco", kSteps));
  config.links.latency_min = config.links.latency_max = milliseconds(20);
  config.step_time = seconds(1);
  config.tracker.eviction_timeout = seconds(4);
  Swarm swarm(config);
  EventLoop& loop = swarm.loop();
  const NodeId tracker = swarm.tracker().node();
  std::uint64_t cut_round = 0;
  std::function<void()> watch = [&] {
    if (swarm.peer(2).in_all_reduce()) {
      cut_round = swarm.peer(2).held_round() + 1;
      swarm.network().reachability().block(swarm.peer_node(2), tracker);
      loop.after(seconds(6), [&swarm, tracker] {
        swarm.network().reachability().unblock(swarm.peer_node(2), tracker);
      });
      return;
    }
    loop.after(milliseconds(1), watch);
  };
  loop.at(TimePoint(seconds(25)), watch);
  swarm.start();
  ASSERT_TRUE(swarm.run_for(std::chrono::minutes(5)));
  ASSERT_GT(cut_round, 0u) << "peer 2 was never seen in an all-reduce";
  EXPECT_EQ(test::violations(swarm), "");
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    ASSERT_TRUE(swarm.peer_up(i) && swarm.peer(i).process()->finished()) << "peer " << i;
    const StrategyProcess& process = *swarm.peer(i).process();
    EXPECT_EQ(process.steps(), kSteps) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).held_round(), 10u) << "peer " << i;
    EXPECT_EQ(process.last_round().kind, train::RoundResult::Kind::committed)
        << "peer " << i << ": its last round is the run's final round, committed with it";
  }
  const auto votes = test::finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

// DeMo's rounds (a step of 50 ms each, over 10 ms links) are much shorter than a download of its
// state over a 1 Mbit/s link (~0.5 s). Peer 2's host vanishes 5 s in: the rounds wait for it
// (wait-rounds, 3 rounds of join-timeout each) and then go on without it. It comes back with
// nothing at 15 s, before it is evicted: the tracker no longer waits for it, and a resync comes
// with each round the others commit. Its fetch runs to its end rather than start over at each,
// the next round waits for its fetch of the newest state, and the peer trains rounds again before
// the run's end (issue 49: it fetched from its restart to the run's end and trained no round).
TEST_F(SimRejoin, ARestartedDemoPeerWhoseFetchOutlastsARoundTrainsRoundsAgain) {
  const std::uint64_t seed = 62;
  test::print_seed(seed);
  constexpr std::uint64_t kSteps = 400;
  SwarmConfig config = test::strategy_swarm(seed, 3, test::tiny_run("demo", kSteps));
  config.links.latency_min = config.links.latency_max = milliseconds(10);
  config.links.bandwidth_min = config.links.bandwidth_max = 1'000'000;
  config.step_time = milliseconds(50);
  config.tracker.join_timeout = seconds(2);
  config.tracker.eviction_timeout = seconds(60);
  Swarm swarm(config);
  swarm.loop().at(TimePoint(seconds(5)), [&swarm] { swarm.crash_peer(2, false); });
  swarm.loop().at(TimePoint(seconds(15)), [&swarm] { swarm.start_peer(2); });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(std::chrono::minutes(2)));
  EXPECT_EQ(test::violations(swarm), "");
  ASSERT_TRUE(swarm.peer_up(2));
  std::printf("[ REJOIN ] peer 2 committed %llu rounds after its restart, of %llu\n",
              static_cast<unsigned long long>(swarm.peer(2).rounds_installed()),
              static_cast<unsigned long long>(swarm.rounds_committed()));
  EXPECT_GT(swarm.peer(2).rounds_installed(), 0u) << "it trains rounds again";
  ASSERT_TRUE(swarm.peer(2).process()->finished());
  EXPECT_EQ(swarm.peer(2).held_round(), kSteps) << "it ends with the run's final round";
  const auto votes = test::finished_states(swarm);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_EQ(votes.begin()->second, 3u);
}

}  // namespace
}  // namespace loco::sim
