// Exact outcomes in virtual time: what the swarm protocol does under one scheduled fault, to the
// nanosecond where the protocol fixes it.
#include <gtest/gtest.h>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::instant_swarm;

TEST(SimExact, APeerSilentForTenSecondsIsEvictedAtExactlyTenSeconds) {
  const std::uint64_t seed = 12;
  test::print_seed(seed);
  Swarm swarm(instant_swarm(seed, 2));
  std::vector<std::pair<TimePoint, std::string>> left;
  swarm.tracker().set_observer([&](const proto::TrackerEvent& e) {
    if (e.kind == proto::TrackerEvent::Kind::left && e.peer == swarm.peer_key(1))
      left.emplace_back(swarm.loop().now(), e.text);
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_until(TimePoint{}));  // everything at t = 0: both peers joined
  ASSERT_TRUE(swarm.tracker().core()->status(TimePoint{}).members.size() == 2);
  swarm.crash_peer(1, /*notify=*/false);  // its host vanishes: no reset, just silence
  ASSERT_TRUE(swarm.run_for(seconds(30)));
  ASSERT_EQ(left.size(), 1u) << test::replay_hint(seed, "SimExact.*");
  EXPECT_EQ(left[0].first, TimePoint(seconds(10)));
  EXPECT_EQ(left[0].second, "evicted: silent for 10 s");
  EXPECT_EQ(swarm.tracker().core()->status(swarm.loop().now()).members.size(), 1u);
}

// Four peers; a member is killed before it has sent `killed_before` bytes of its part (each phase
// sends 3/4 of the vector): the survivors retry the round without it and end with one state.
void survivors_of_a_kill_mid_all_reduce_are_identical(proto::AllReduceAlgorithm algorithm,
                                                      double killed_before) {
  const std::uint64_t seed = 34;
  test::print_seed(seed);
  SwarmConfig c = instant_swarm(seed, 4);
  c.all_reduce = algorithm;
  c.links.latency_min = c.links.latency_max = milliseconds(20);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.compute.dim = std::size_t{1} << 18;  // 1 MiB of fp32: the exchange takes tens of milliseconds
  c.chunk_values = std::size_t{1} << 14;
  Swarm swarm(c);
  swarm.start();
  // Step until the first all-reduce is under way, then kill a member that has sent part of its
  // share.
  std::size_t victim = c.peers;
  for (int ms = 0; ms < 60'000 && victim == c.peers; ++ms) {
    ASSERT_TRUE(swarm.run_for(milliseconds(1)));
    for (std::size_t i = 0; i < c.peers; ++i)
      if (swarm.peer(i).in_all_reduce() && swarm.peer(i).all_reduce_bytes_sent() > 0) victim = i;
  }
  ASSERT_LT(victim, c.peers) << "no all-reduce started; " << test::replay_hint(seed, "SimExact.*");
  ASSERT_LT(static_cast<double>(swarm.peer(victim).all_reduce_bytes_sent()),
            killed_before * static_cast<double>(c.compute.dim * 4));
  const std::uint64_t round = swarm.peer(victim).state().round + 1;
  swarm.crash_peer(victim);
  ASSERT_TRUE(swarm.run_for(seconds(60)));

  const auto states = test::live_states(swarm);
  ASSERT_EQ(states.size(), 3u);
  for (const auto& [i, s] : states) {
    EXPECT_GE(s.first, round) << "peer " << i;
    EXPECT_EQ(s, states.begin()->second) << "peer " << i << " differs";
  }
  // The round was committed by the three survivors (its first attempt aborted).
  const auto history = swarm.tracker().core()->snapshot().history;
  ASSERT_GE(history.size(), round);
  EXPECT_EQ(history[round - 1].round, round);
  EXPECT_EQ(history[round - 1].group_size, 3u);
  EXPECT_GE(swarm.rounds_aborted(), 1u);
  EXPECT_TRUE(swarm.ledger().violations().empty())
      << test::violations(swarm) << test::replay_hint(seed, "SimExact.*");
}

TEST(SimExact, ARoundWithAMemberKilledMidReduceScatterEndsWithTheSurvivorsIdentical) {
  survivors_of_a_kill_mid_all_reduce_are_identical(proto::AllReduceAlgorithm::ring, 0.75);
}

// The direct exchange, its owners checked (the tracker's default), posts its whole reduce-scatter
// share at once, to owners and checkers (6/4 of the vector): the member is killed before it has
// sent every other member the mean of its own segment (the all-gather, 3/4 of a quarter more).
TEST(SimExact, ADirectExchangeWithAMemberKilledBeforeItsAllGatherEndsWithTheSurvivorsIdentical) {
  survivors_of_a_kill_mid_all_reduce_are_identical(proto::AllReduceAlgorithm::direct, 1.6);
}

TEST(SimExact, TheTrackerRestartedMidRoundLosesNoRound) {
  const std::uint64_t seed = 56;
  test::print_seed(seed);
  SwarmConfig c = instant_swarm(seed, 4);
  c.links.latency_min = c.links.latency_max = milliseconds(20);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.compute.dim = std::size_t{1} << 18;
  c.chunk_values = std::size_t{1} << 14;
  Swarm swarm(c);
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(20)));  // a few rounds
  bool mid_round = false;
  for (int ms = 0; ms < 60'000 && !mid_round; ++ms) {
    ASSERT_TRUE(swarm.run_for(milliseconds(1)));
    for (std::size_t i = 0; i < c.peers; ++i)
      mid_round = mid_round || swarm.peer(i).in_all_reduce();
  }
  ASSERT_TRUE(mid_round);
  const std::uint64_t before = swarm.tracker().core()->snapshot().committed_round;
  ASSERT_GE(before, 1u);
  swarm.crash_tracker();
  ASSERT_TRUE(swarm.run_for(seconds(3)));
  swarm.restart_tracker();
  EXPECT_EQ(swarm.tracker().core()->snapshot().committed_round, before);  // from its disk
  ASSERT_TRUE(swarm.run_for(seconds(60)));

  // Every round from 1 on was committed once, in order, with no gap and no second commit.
  const auto history = swarm.tracker().core()->snapshot().history;
  ASSERT_GE(history.size(), before + 2) << test::replay_hint(seed, "SimExact.*");
  for (std::size_t k = 0; k < history.size(); ++k) EXPECT_EQ(history[k].round, k + 1);
  const auto states = test::live_states(swarm);
  for (const auto& [i, s] : states) EXPECT_EQ(s.second, states.begin()->second.second);
  EXPECT_TRUE(swarm.ledger().violations().empty())
      << test::violations(swarm) << test::replay_hint(seed, "SimExact.*");
}

}  // namespace
}  // namespace loco::sim
