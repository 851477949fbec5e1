// Gossip in virtual time (docs/DESIGN.md §1.6): groups average within themselves over rosters every
// member agrees on, a group that loses a member leaves its survivors alone, a peer back without
// its checkpoint copies a neighbour, and a run replays from its seed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::instant_swarm;

SwarmConfig gossip_swarm(std::uint64_t seed, std::size_t peers, std::size_t g) {
  SwarmConfig c = instant_swarm(seed, peers);
  c.gossip_group = g;
  return c;
}

// The spread of peers that never average: each applies its own updates only.
double independent_spread(const SwarmConfig& c, std::uint64_t rounds) {
  const Swarm reference(c);  // its noisy quadratic, drawn from the seed
  ComputeModel& compute = reference.compute();
  std::vector<std::vector<float>> thetas;
  for (std::size_t i = 0; i < c.peers; ++i) {
    std::vector<float> theta = compute.genesis();
    std::vector<float> momentum(theta.size(), 0.0f);
    for (std::uint64_t p = 0; p < rounds; ++p)
      optim::outer_nesterov_step(compute.outer(), theta, momentum,
                                 compute.pseudo_gradient(theta, i, p, compute.inner_steps()));
    thetas.push_back(std::move(theta));
  }
  const std::size_t dim = thetas.front().size();
  double squares = 0;
  for (std::size_t j = 0; j < dim; ++j) {
    double mean = 0;
    for (const auto& t : thetas) mean += t[j] / static_cast<double>(c.peers);
    for (const auto& t : thetas) squares += (t[j] - mean) * (t[j] - mean);
  }
  return std::sqrt(squares / static_cast<double>(dim * c.peers));
}

TEST(SimGossip, GroupsKeepTheSpreadFarBelowPeersThatNeverAverage) {
  const std::uint64_t seed = 21;
  test::print_seed(seed);
  // All-reduce: every peer holds the committed state, a spread of exactly 0.
  Swarm all_reduce(instant_swarm(seed, 16));
  all_reduce.start();
  ASSERT_TRUE(all_reduce.run_for(seconds(30)));
  EXPECT_EQ(all_reduce.spread(), 0.0);

  std::map<std::size_t, double> spread;  // by g, after 30 rounds
  for (const std::size_t g : {2u, 4u, 8u}) {
    Swarm swarm(gossip_swarm(seed, 16, g));
    swarm.start();
    ASSERT_TRUE(swarm.run_for(milliseconds(30'500)));  // 1 s of inner steps a round
    for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(swarm.peer(i).state().round, 30u) << i;
    EXPECT_TRUE(swarm.ledger().violations().empty())
        << test::violations(swarm) << test::replay_hint(seed, "SimGossip.*");
    spread[g] = swarm.spread();
    // The tracker node learns it every minute of virtual time.
    ASSERT_TRUE(swarm.run_for(seconds(30)));
    EXPECT_GT(swarm.tracker().core()->status(swarm.loop().now()).spread, 0.0);
  }
  const double alone = independent_spread(instant_swarm(seed, 16), 30);
  EXPECT_GT(spread[2], 0.0);
  EXPECT_LT(spread[2], alone / 2) << "alone " << alone;
  EXPECT_LT(spread[4], spread[2]);
  EXPECT_LT(spread[8], spread[4]);
}

// A tail of peers 10x slower (issue 26): with phases of H steps every group, and through the grid
// everyone, waits for them; with phases clocked by time each peer takes the steps that fit and the
// rounds go at the time's pace. The loss still falls: a slow peer's Δ is from fewer steps.
TEST(SimGossip, PhasesClockedByTimeKeepTheSwarmsPaceWithATailOfSlowPeers) {
  const std::uint64_t seed = 29;
  test::print_seed(seed);
  std::map<bool, double> rounds;  // by clocked, the mean round after 60 s
  std::map<bool, double> loss;
  double start_loss = 0;
  for (const bool clocked : {false, true}) {
    SwarmConfig c = gossip_swarm(seed, 16, 4);
    c.compute.inner_steps = 10;
    c.step_time = milliseconds(100);  // a phase of 1 s
    c.slow_tail = 0.25;               // 4 of 16 take 1 s a step
    if (clocked) c.phase_time = seconds(1);
    Swarm swarm(c);
    start_loss = swarm.compute().loss(swarm.compute().genesis());
    swarm.start();
    ASSERT_TRUE(swarm.run_for(seconds(60)));
    double sum = 0;
    for (std::size_t i = 0; i < 16; ++i) sum += static_cast<double>(swarm.peer(i).state().round);
    rounds[clocked] = sum / 16;
    loss[clocked] = swarm.mean_loss();
    EXPECT_TRUE(swarm.ledger().violations().empty())
        << test::violations(swarm) << test::replay_hint(seed, "SimGossip.*");
  }
  std::printf("rounds %.1f / %.1f, loss %.5f / %.5f from %.5f\n", rounds[false], rounds[true],
              loss[false], loss[true], start_loss);
  EXPECT_LT(rounds[false], 20.0) << "H steps: the slow tail sets the pace";
  EXPECT_GT(rounds[true], 50.0) << "clocked: about a round a second";
  EXPECT_LT(loss[true], start_loss / 2);
  EXPECT_LT(loss[true], loss[false]) << "more rounds in the same time";
}

// Links of 50 ms and inner phases of half a second: the tracker's views reach some peers after
// their first phase, and peers group rounds while views still arrive. Every round's roster was
// fixed before anyone grouped it, so no group waits for a partner that grouped it otherwise.
// (Grouped over each peer's latest view, such rounds left peers waiting out gossip_wait, and the
// wait spread round by round to the whole swarm.)
TEST(SimGossip, PeersAgreeOnTheGroupingWhileTheirViewsArrive) {
  const std::uint64_t seed = 23;
  test::print_seed(seed);
  SwarmConfig c;  // secure channels' costs modelled, as in bench/run.sh sim-gossip
  c.seed = seed;
  c.peers = 16;
  c.gossip_group = 2;
  c.links.latency_min = c.links.latency_max = milliseconds(50);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.tracker_link.latency = milliseconds(10);
  c.compute.inner_steps = 20;
  c.step_time = milliseconds(25);
  c.step_time_spread = 0.1;
  Swarm swarm(c);
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(20)));
  for (std::size_t i = 0; i < 16; ++i)
    EXPECT_GE(swarm.peer(i).state().round, 20u)
        << i << " " << test::replay_hint(seed, "SimGossip.*");
  EXPECT_EQ(swarm.ledger().gossip_waits_expired(), 0u);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
}

// Peers of unequal speed (step times spread 30%) under heavy churn (a departure and an arrival
// every 10 s or so, crashes with and without checkpoints among them): every member of a round
// groups the same roster whenever it gets there, a crashed partner is dropped when the tracker
// removes it, and a slower one is waited for. No group waits out gossip_wait; the rounds peers
// apply alone are the run's first and newcomers' first ones, which no roster lists them in.
// (Grouped over each peer's latest view, most rounds ended alone after gossip_wait: docs/SCALE.md.)
TEST(SimGossip, UnequalPeersUnderChurnNeverWaitOutTheirGroups) {
  const std::uint64_t seed = 29;
  test::print_seed(seed);
  SwarmConfig c = gossip_swarm(seed, 48, 4);
  c.links.latency_min = milliseconds(20);
  c.links.latency_max = milliseconds(100);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.step_time_spread = 0.3;
  Swarm swarm(c);
  swarm.start();
  swarm.churn(7.5);  // x 48 peers per hour: one departure and one arrival every 10 s
  ASSERT_TRUE(swarm.run_for(std::chrono::minutes(5)));
  EXPECT_TRUE(swarm.ledger().violations().empty())
      << test::violations(swarm) << test::replay_hint(seed, "SimGossip.*");
  EXPECT_EQ(swarm.ledger().gossip_waits_expired(), 0u) << test::replay_hint(seed, "SimGossip.*");
  EXPECT_LT(swarm.ledger().applied_alone() * 10, swarm.ledger().installs())
      << swarm.ledger().applied_alone() << " of " << swarm.ledger().installs() << " alone; "
      << test::replay_hint(seed, "SimGossip.*");
}

// A group is whole or not at all: the view that removes a member lost mid-ring leaves each survivor
// alone for the round (its own state and update: never a partial mean), at once, not after
// gossip_wait.
TEST(SimGossip, AGroupThatLosesAMemberMidRingLeavesEachSurvivorAlone) {
  const std::uint64_t seed = 43;
  test::print_seed(seed);
  SwarmConfig c = gossip_swarm(seed, 16, 4);
  c.links.latency_min = c.links.latency_max = milliseconds(20);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.compute.dim = std::size_t{1} << 14;  // 3 x 64 KiB of fp32: a ring takes about 200 ms
  c.chunk_values = std::size_t{1} << 10;
  Swarm swarm(c);
  swarm.start();
  ASSERT_TRUE(swarm.run_for(seconds(5)));  // a few rounds
  std::size_t victim = c.peers;
  for (int ms = 0; ms < 10'000 && victim == c.peers; ++ms) {
    ASSERT_TRUE(swarm.run_for(milliseconds(1)));
    for (std::size_t i = 0; i < c.peers; ++i)
      if (swarm.peer(i).in_all_reduce() && swarm.peer(i).all_reduce_bytes_sent() > 0) victim = i;
  }
  ASSERT_LT(victim, c.peers) << "no ring started; " << test::replay_hint(seed, "SimGossip.*");
  const std::vector<proto::PeerKey> group = swarm.peer(victim).group_members();
  ASSERT_EQ(group.size(), 4u);
  const std::uint64_t round = swarm.peer(victim).state().round + 1;
  std::vector<std::size_t> survivors;
  for (std::size_t i = 0; i < c.peers; ++i)
    if (i != victim && std::count(group.begin(), group.end(), swarm.peer_key(i)) == 1)
      survivors.push_back(i);
  ASSERT_EQ(survivors.size(), 3u);
  swarm.crash_peer(victim);

  // The survivors apply alone within a second (before their next round).
  bool all_there = false;
  for (int ms = 0; ms < 2'000 && !all_there; ++ms) {
    ASSERT_TRUE(swarm.run_for(milliseconds(1)));
    all_there = std::all_of(survivors.begin(), survivors.end(),
                            [&](std::size_t i) { return swarm.peer(i).state().round >= round; });
  }
  ASSERT_TRUE(all_there) << test::replay_hint(seed, "SimGossip.*");
  std::set<Digest> states;
  for (const std::size_t i : survivors) {
    EXPECT_EQ(swarm.peer(i).state().round, round) << "peer " << i;
    states.insert(swarm.peer(i).state().manifest().state_hash());
  }
  EXPECT_EQ(states.size(), survivors.size()) << "each survivor applied its own state";
  ASSERT_TRUE(swarm.run_for(seconds(20)));
  EXPECT_TRUE(swarm.ledger().violations().empty())
      << test::violations(swarm) << test::replay_hint(seed, "SimGossip.*");
}

TEST(SimGossip, APeerRestartedWithoutItsCheckpointCopiesANeighbour) {
  const std::uint64_t seed = 17;
  test::print_seed(seed);
  Swarm swarm(gossip_swarm(seed, 16, 4));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(milliseconds(10'500)));  // 1 s of inner steps a round: round 10
  ASSERT_EQ(swarm.peer(3).state().round, 10u);
  swarm.restart_peer(3, /*with_checkpoint=*/false);
  ASSERT_TRUE(swarm.run_for(milliseconds(100)));
  EXPECT_EQ(swarm.peer(3).state().round, 10u) << "copied, not back at round 0";
  ASSERT_TRUE(swarm.run_for(seconds(40)));
  EXPECT_GT(swarm.peer(3).state().round, 10u) << "it trains on from the copy";
  EXPECT_TRUE(swarm.ledger().violations().empty())
      << test::violations(swarm) << test::replay_hint(seed, "SimGossip.*");
}

TEST(SimGossip, TheSameSeedGivesTheSameTrace) {
  const auto trace = [](std::uint64_t seed) {
    Swarm swarm(gossip_swarm(seed, 16, 2));
    swarm.start();
    EXPECT_TRUE(swarm.run_for(seconds(20)));
    return std::pair(swarm.loop().trace_hash(), swarm.spread());
  };
  test::print_seed(5);
  EXPECT_EQ(trace(5), trace(5));
  EXPECT_NE(trace(5).first, trace(6).first);
}

}  // namespace
}  // namespace loco::sim
