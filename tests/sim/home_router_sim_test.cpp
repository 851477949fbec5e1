// Peers behind NATs in the simulator (link::Reachability::put_behind_nat): the tracker's probe
// finds them, they dial the reachable members and are answered on those links (the rule of
// proto/link_direction.hpp that loco-peer follows too), a round's group holds at most one of them,
// and those left out fetch the run's state from reachable donors. The run goes on with no fault
// and no ledger violation.
#include <gtest/gtest.h>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

void two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm algorithm) {
  const std::uint64_t seed = 28;
  test::print_seed(seed);
  SwarmConfig c = test::instant_swarm(seed, 5);
  c.all_reduce = algorithm;
  c.links.latency_min = c.links.latency_max = milliseconds(30);
  Swarm swarm(c);
  const std::vector<std::size_t> behind = {1, 3};
  for (std::size_t i : behind) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(5))) << test::replay_hint(seed, "SimHomeRouter.*");

  const auto status = swarm.tracker().core()->status(swarm.loop().now());
  EXPECT_EQ(status.members.size(), 5u) << "nobody evicted";
  EXPECT_EQ(status.members_reachable, 3u);
  EXPECT_EQ(status.members_unreachable, 2u);
  for (const auto& m : status.members) {
    const bool natted = m.public_key == secure::to_hex(swarm.peer_key(1)) ||
                        m.public_key == secure::to_hex(swarm.peer_key(3));
    EXPECT_EQ(m.reachability,
              natted ? proto::Reachability::unreachable : proto::Reachability::reachable);
  }
  EXPECT_GE(swarm.rounds_committed(), 20u);
  // Two unreachable members never share a group: every round went with four of the five.
  ASSERT_FALSE(status.history.empty());
  for (const auto& r : status.history) EXPECT_LE(r.group_size, 4u) << "round " << r.round;
  EXPECT_GT(status.members_left_out, 0u);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << swarm.ledger().violations().front();
  // Each of them took part in rounds: it committed states, not only fetched them.
  for (std::size_t i : behind) EXPECT_GT(swarm.peer(i).state().round, 10u) << "peer " << i;
}

TEST(SimHomeRouter, TwoOfFivePeersBehindNatTrainWithTheRestByRing) {
  two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm::ring);
}

TEST(SimHomeRouter, TwoOfFivePeersBehindNatTrainWithTheRestByDirectExchange) {
  two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm::direct);
}

}  // namespace
}  // namespace loco::sim
