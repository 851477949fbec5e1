// Peers behind NATs in the simulator (link::Reachability::put_behind_nat): the tracker's probe
// finds them, they dial the reachable members and are answered on those links (the rule of
// proto/link_direction.hpp that loco-peer follows too), two of them talk through a reachable
// member of their group that relays (proto/relay_core.hpp), and with no relay budget a group
// holds at most one of them. The run goes on with no fault and no ledger violation.
#include <gtest/gtest.h>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

bool natted(const Swarm& swarm, const std::vector<std::size_t>& behind, const std::string& hex) {
  return std::any_of(behind.begin(), behind.end(),
                     [&](std::size_t i) { return hex == secure::to_hex(swarm.peer_key(i)); });
}

// Peers of the same round hold the same bits, and every live peer is within a round of the
// newest: the swarm has one state.
void expect_one_state(const Swarm& swarm) {
  std::map<std::uint64_t, Digest> by_round;
  std::uint64_t newest = 0;
  for (const auto& [i, state] : test::live_states(swarm)) {
    const auto [it, first] = by_round.emplace(state.first, state.second);
    EXPECT_EQ(it->second, state.second) << "peer " << i << " at round " << state.first;
    newest = std::max(newest, state.first);
  }
  for (const auto& [i, state] : test::live_states(swarm))
    EXPECT_GE(state.first + 1, newest) << "peer " << i;
}

std::uint64_t relayed_bytes(const Swarm& swarm) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    if (swarm.peer_up(i)) sum += swarm.peer(i).bytes_relayed();
  return sum;
}

SwarmConfig home_swarm(std::uint64_t seed, std::size_t peers, proto::AllReduceAlgorithm algorithm) {
  SwarmConfig c = test::instant_swarm(seed, peers);
  c.all_reduce = algorithm;
  c.links.latency_min = c.links.latency_max = milliseconds(30);
  return c;
}

void two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm algorithm) {
  const std::uint64_t seed = 28;
  test::print_seed(seed);
  Swarm swarm(home_swarm(seed, 5, algorithm));
  const std::vector<std::size_t> behind = {1, 3};
  for (std::size_t i : behind) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(5))) << test::replay_hint(seed, "SimHomeRouter.*");

  const auto status = swarm.tracker().core()->status(swarm.loop().now());
  EXPECT_EQ(status.members.size(), 5u) << "nobody evicted";
  EXPECT_EQ(status.members_reachable, 3u);
  EXPECT_EQ(status.members_unreachable, 2u);
  for (const auto& m : status.members)
    EXPECT_EQ(m.reachability, natted(swarm, behind, m.public_key) ? proto::Reachability::unreachable
                                                                  : proto::Reachability::reachable);
  EXPECT_GE(swarm.rounds_committed(), 20u);
  // Both unreachable members share the groups once measured: their link is relayed, or in a ring
  // not needed (each sits between reachable ones).
  ASSERT_FALSE(status.history.empty());
  EXPECT_EQ(status.history.back().group_size, 5u);
  EXPECT_EQ(status.members_left_out, 0u);
  if (algorithm == proto::AllReduceAlgorithm::direct) {
    EXPECT_GT(status.relayed_links, 0u);
    EXPECT_GT(relayed_bytes(swarm), 0u) << "the direct exchange links every pair";
  } else {
    EXPECT_EQ(status.relayed_links, 0u) << "the ring keeps them apart: no neighbour is relayed";
    EXPECT_EQ(relayed_bytes(swarm), 0u);
  }
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  for (std::size_t i : behind) EXPECT_GT(swarm.peer(i).state().round, 10u) << "peer " << i;
  expect_one_state(swarm);
}

TEST(SimHomeRouter, TwoOfFivePeersBehindNatTrainWithTheRestByRing) {
  two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm::ring);
}

TEST(SimHomeRouter, TwoOfFivePeersBehindNatTrainWithTheRestByDirectExchange) {
  two_of_five_behind_nat_train_with_the_rest(proto::AllReduceAlgorithm::direct);
}

// Six of ten behind NATs, four reachable relays of four pairs each (16 ≥ 15 links): every round's
// group holds all ten, and the unreachable ones commit every round like the others.
void six_of_ten_behind_nat(proto::AllReduceAlgorithm algorithm) {
  const std::uint64_t seed = 2828;
  test::print_seed(seed);
  SwarmConfig c = home_swarm(seed, 10, algorithm);
  c.relay = proto::RelayBudget{.max_pairs = 4, .max_bytes_per_attempt = 0};
  Swarm swarm(c);
  const std::vector<std::size_t> behind = {0, 2, 3, 5, 7, 8};
  for (std::size_t i : behind) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(5))) << test::replay_hint(seed, "SimHomeRouter.*");

  const auto status = swarm.tracker().core()->status(swarm.loop().now());
  EXPECT_EQ(status.members.size(), 10u);
  EXPECT_EQ(status.members_unreachable, 6u);
  EXPECT_EQ(status.members_left_out, 0u);
  EXPECT_EQ(status.relays_blamed, 0u);
  EXPECT_GE(swarm.rounds_committed(), 20u);
  std::size_t full = 0;
  for (const auto& r : status.history) full += r.group_size == 10u;
  EXPECT_GE(full, 15u) << "rounds with all ten";
  EXPECT_GT(relayed_bytes(swarm), 0u);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  for (std::size_t i : behind) EXPECT_GE(swarm.peer(i).rounds_installed(), 15u) << "peer " << i;
  expect_one_state(swarm);
}

TEST(SimHomeRouter, SixOfTenBehindNatShareEveryRoundThroughRelaysByRing) {
  six_of_ten_behind_nat(proto::AllReduceAlgorithm::ring);
}

TEST(SimHomeRouter, SixOfTenBehindNatShareEveryRoundThroughRelaysByDirectExchange) {
  six_of_ten_behind_nat(proto::AllReduceAlgorithm::direct);
}

// With no relay budget anywhere, two unreachable members never share a group: every round goes
// with four of the five, and those left out fetch the run's state from reachable donors.
TEST(SimHomeRouter, WithoutRelaysAGroupHoldsOneUnreachableMember) {
  const std::uint64_t seed = 28;
  test::print_seed(seed);
  SwarmConfig c = home_swarm(seed, 5, proto::AllReduceAlgorithm::direct);
  c.relay = proto::RelayBudget{.max_pairs = 0, .max_bytes_per_attempt = 0};
  Swarm swarm(c);
  const std::vector<std::size_t> behind = {1, 3};
  for (std::size_t i : behind) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(5))) << test::replay_hint(seed, "SimHomeRouter.*");
  const auto status = swarm.tracker().core()->status(swarm.loop().now());
  EXPECT_GE(swarm.rounds_committed(), 20u);
  for (const auto& r : status.history) EXPECT_LE(r.group_size, 4u) << "round " << r.round;
  EXPECT_GT(status.members_left_out, 0u);
  EXPECT_EQ(status.relayed_links, 0u);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  for (std::size_t i : behind) EXPECT_GT(swarm.peer(i).state().round, 10u) << "peer " << i;
}

// A reachable member that relays nothing (it drops every relay_data it should forward, silently):
// the attempt stalls to its deadline, the tracker blames the relays of the stragglers' links
// instead of the stragglers, the retry goes with the other relay, the dropper relays nothing for
// the next ten rounds, and the honest ends are never left out for it.
TEST(SimHomeRouter, ARelayThatDropsCostsOneAttemptAndNoHonestMember) {
  const std::uint64_t seed = 2829;
  test::print_seed(seed);
  SwarmConfig c = home_swarm(seed, 6, proto::AllReduceAlgorithm::direct);
  c.relay = proto::RelayBudget{.max_pairs = 0, .max_bytes_per_attempt = 0};
  c.relay_of_peer[0] =
      proto::RelayBudget{.max_pairs = 4, .max_bytes_per_attempt = 0};  // chosen first
  c.relay_of_peer[1] = proto::RelayBudget{.max_pairs = 1, .max_bytes_per_attempt = 0};
  c.tracker.round_timeout = std::chrono::seconds(20);
  c.behaviours[0] = Behaviour::relay_dropper;
  Swarm swarm(c);
  const std::vector<std::size_t> behind = {3, 4};
  for (std::size_t i : behind) swarm.network().reachability().put_behind_nat(swarm.peer_node(i));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(15))) << test::replay_hint(seed, "SimHomeRouter.*");
  const auto status = swarm.tracker().core()->status(swarm.loop().now());
  EXPECT_GE(swarm.rounds_committed(), 20u);
  // Blamed, it relays nothing for accusation_bench_rounds (10) more rounds: at most one lost
  // attempt in eleven rounds.
  EXPECT_GT(status.relays_blamed, 0u);
  EXPECT_LE(status.relays_blamed, swarm.rounds_committed() / 11 + 1);
  EXPECT_EQ(status.members.size(), 6u) << "nobody evicted";
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  for (std::size_t i : behind) EXPECT_GE(swarm.peer(i).rounds_installed(), 15u) << "peer " << i;
  expect_one_state(swarm);
}

}  // namespace
}  // namespace loco::sim
