// gossip_groups: every peer in exactly one group of 2..g+2, the same grouping for everyone with
// the same view, new groups each round, information mixed across the swarm after a few rounds.
#include "loco/proto/gossip_groups.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "loco/core/rng.hpp"

namespace loco::proto {
namespace {

std::vector<PeerKey> peers(std::size_t n, std::uint64_t seed = 7) {
  std::vector<PeerKey> out(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t b = 0; b < 32; ++b)
      out[i].bytes[b] = static_cast<std::uint8_t>(counter_u64(seed, i, b));
  return out;
}

GossipRound at(std::uint64_t round, std::size_t g) {
  return GossipRound{.run_id = "run", .round = round, .group_size = g};
}

TEST(GossipGroups, EveryPeerIsInExactlyOneGroupOfTwoToGPlusTwo) {
  for (const std::size_t g : {2u, 3u, 4u, 8u})
    for (const std::size_t n : {1u, 2u, 3u, 5u, 7u, 8u, 9u, 16u, 17u, 31u, 64u, 100u, 1000u})
      for (std::uint64_t round = 0; round < 6; ++round) {
        const auto live = peers(n);
        const auto groups = gossip_groups(at(round, g), live);
        std::multiset<PeerKey> seen;
        for (const auto& group : groups) {
          EXPECT_TRUE(std::is_sorted(group.begin(), group.end()));
          EXPECT_GE(group.size(), n == 1 ? 1u : 2u) << "n=" << n << " g=" << g;
          EXPECT_LE(group.size(), g + 2);
          seen.insert(group.begin(), group.end());
        }
        EXPECT_EQ(seen, std::multiset<PeerKey>(live.begin(), live.end())) << "n=" << n;
      }
}

TEST(GossipGroups, AFullGridGivesGroupsOfExactlyG) {
  for (const auto& group : gossip_groups(at(5, 4), peers(64))) EXPECT_EQ(group.size(), 4u);
  for (const auto& group : gossip_groups(at(1, 2), peers(10))) EXPECT_EQ(group.size(), 2u);
}

TEST(GossipGroups, EveryPeerComputesTheSameGroupingFromTheSameView) {
  auto live = peers(37);
  const auto expected = gossip_groups(at(11, 3), live);
  std::reverse(live.begin(), live.end());  // the order a peer holds its view in does not matter
  EXPECT_EQ(gossip_groups(at(11, 3), live), expected);
  for (const auto& group : expected)
    for (const PeerKey& p : group) EXPECT_EQ(gossip_group_of(at(11, 3), live, p), group);
  EXPECT_TRUE(gossip_group_of(at(11, 3), live, peers(1, 99)[0]).empty());
}

TEST(GossipGroups, IsDeterministicAndKeyedByRunAndRound) {
  const auto live = peers(50);
  EXPECT_EQ(gossip_groups(at(4, 2), live), gossip_groups(at(4, 2), live));
  EXPECT_NE(gossip_groups(at(4, 2), live), gossip_groups(at(5, 2), live));
  GossipRound other = at(4, 2);
  other.run_id = "another run";
  EXPECT_NE(gossip_groups(other, live), gossip_groups(at(4, 2), live));
}

TEST(GossipGroups, PairsChangeEveryRound) {
  // NoLoCo's case: a peer's partner in consecutive rounds differs (almost always).
  const auto live = peers(64);
  std::size_t same = 0;
  for (std::uint64_t round = 0; round < 20; ++round) {
    const auto a = gossip_groups(at(round, 2), live);
    const auto b = gossip_groups(at(round + 1, 2), live);
    for (const auto& group : a) same += std::count(b.begin(), b.end(), group);
  }
  EXPECT_LT(same, 20u * 32u / 10u);
}

// Rounds until every peer's value has reached every other peer (the union of the groups' graphs
// over those rounds is connected and averages have spread along it): tracked as sets of origins.
std::size_t rounds_to_mix(std::size_t n, std::size_t g) {
  const auto live = peers(n);
  std::map<PeerKey, std::set<std::size_t>> reached;
  for (std::size_t i = 0; i < n; ++i) reached[live[i]] = {i};
  for (std::size_t round = 0; round < 64; ++round) {
    for (const auto& group : gossip_groups(at(round, g), live)) {
      std::set<std::size_t> all;
      for (const PeerKey& p : group) all.insert(reached[p].begin(), reached[p].end());
      for (const PeerKey& p : group) reached[p] = all;
    }
    if (std::all_of(reached.begin(), reached.end(),
                    [&](const auto& e) { return e.second.size() == n; }))
      return round + 1;
  }
  return 64;
}

TEST(GossipGroups, InformationReachesEveryPeerInAboutLogGOfNRounds) {
  EXPECT_EQ(rounds_to_mix(64, 4), 3u);  // a full grid of 4^3: exactly k rounds (Moshpit)
  EXPECT_EQ(rounds_to_mix(16, 2), 4u);  // 2^4
  EXPECT_LE(rounds_to_mix(100, 4), 8u);
  EXPECT_EQ(rounds_to_mix(512, 8), 3u);  // 8^3
  EXPECT_LE(rounds_to_mix(300, 8), 8u);
  EXPECT_LE(rounds_to_mix(33, 2), 14u);
}

TEST(GossipGroups, AveragingInGroupsConvergesToTheGlobalMean) {
  const auto live = peers(30);
  std::map<PeerKey, double> x;
  for (std::size_t i = 0; i < live.size(); ++i) x[live[i]] = static_cast<double>(i * i % 17);
  double mean = 0;
  for (const auto& [p, v] : x) mean += v / 30.0;
  for (std::uint64_t round = 0; round < 20; ++round)
    for (const auto& group : gossip_groups(at(round, 3), live)) {
      double sum = 0;
      for (const PeerKey& p : group) sum += x[p];
      for (const PeerKey& p : group) x[p] = sum / static_cast<double>(group.size());
    }
  for (const auto& [p, v] : x) EXPECT_NEAR(v, mean, 1e-3);
}

}  // namespace
}  // namespace loco::proto
