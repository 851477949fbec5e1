// Gossip mode over a real swarm on loopback (loco-tracker and 8 loco-peer processes,
// `strategy.gossip-group = 4`): each round every peer averages θ, v and Δ with the group
// proto::gossip_groups gives it from its view, with no tracker round (round/swarm_group.hpp).
// After every round a state is held only by members of the group that made it (no more peers than
// the group's size; a member whose gossip wait ran out just before the others finished applies
// alone, though the others' mean has its part; a late joiner copies a neighbour's state first),
// a peer that ended alone holds a state of its own, the tracker's /metrics shows the spread of the
// peers' parameters while they run, and the loss falls. Every wait is on a line a process prints
// (peer_process.hpp) or on the tracker's /metrics.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "../support/local_swarm.hpp"
#include "../support/tracker_metrics.hpp"
#include "../support/tracker_process.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

constexpr std::uint64_t kGossipRounds = 12;

// The tracker's /metrics, read until it shows a spread between its members (each peer renews its
// sketch every round, and after round 1, which every peer applies alone, no two peers in
// different groups hold the same θ). False once fewer than two members are left to compare.
bool tracker_shows_a_spread(const test::TrackerProcess& tracker) {
  test::TestClient client(test::endpoint_of(tracker.http_address()));
  for (;;) {
    const auto samples = test::read_metrics(client);
    if (samples.empty()) return false;
    if (samples.at("loco_tracker_spread") > 0) return true;
    if (samples.at("loco_tracker_members") < 2) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling, not a deadline
  }
}

TEST(SwarmGossip, EightPeersInGroupsOfFourHoldOnlyTheirGroupsStates) {
  LocalSwarm swarm("gossip-eight", kGossipRounds, {}, test::kDiLoCoStrategy + "gossip-group = 4\n");
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // Inner steps of 50 ms: rounds of 0.2 s, long against a group's exchange on loopback. A group
  // whose partners hold another view (peers still joining) gives up after 3 s and applies alone.
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 8; ++i)
    peers.push_back(&swarm.add_peer("peer" + std::to_string(i),
                                    {"--debug.step-delay", "50", "--peer.gossip-wait", "3s"}));
  ASSERT_TRUE(peers[0]->wait_round(1)) << swarm.logs();
  EXPECT_TRUE(tracker_shows_a_spread(swarm.tracker())) << swarm.logs();
  for (PeerProcess* p : peers) {
    EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << swarm.logs();
    EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
  }
  // A peer that joined behind most members (slow to start on a loaded machine) is told to copy a
  // neighbour's state (the tracker's "copies a neighbour's round" line): at its join, and then its
  // rounds start after round 1, or during its first round, which is then replaced (a copy of a
  // group's state, not a group's mean). Every other round line of every peer is a commit.
  std::size_t late = 0;
  for (const PeerProcess* p : peers) {
    ASSERT_FALSE(p->rounds().empty()) << swarm.logs();
    const test::RoundLine& first = p->rounds().front();
    EXPECT_EQ(p->rounds().back().round, kGossipRounds) << swarm.logs();
    EXPECT_EQ(p->rounds().size(), kGossipRounds - first.round + 1) << "one line a round\n"
                                                                   << swarm.logs();
    if (first.round > 1 || first.kind == "replaced") ++late;
  }
  EXPECT_LE(late, test::occurrences(swarm.tracker().log(), "copies a neighbour's round"))
      << swarm.logs();
  std::size_t grouped = 0;  // rounds a peer applied with at least one partner
  for (std::uint64_t r = 1; r <= kGossipRounds; ++r) {
    std::map<std::string, std::vector<std::size_t>> holders;  // state at round r → its members
    for (const PeerProcess* p : peers)
      for (const test::RoundLine& line : p->rounds())
        if (line.round == r) {
          if (line.kind == "replaced" && &line == &p->rounds().front()) continue;
          ASSERT_EQ(line.kind, "committed") << "applied, in gossip mode\n" << swarm.logs();
          holders[line.state].push_back(line.members);
          if (line.members >= 2) ++grouped;
        }
    for (const auto& [state, members] : holders)
      for (const std::size_t m : members)
        EXPECT_GE(m, members.size())
            << "round " << r << ": a group of " << m << " and " << members.size()
            << " peer(s) holding its state " << state << "\n"
            << swarm.logs();
  }
  EXPECT_GT(grouped, 0u) << "some peers averaged\n" << swarm.logs();
  std::printf("%zu of %llu peer-rounds applied with partners; %zu peer(s) joined late and copied\n",
              grouped, static_cast<unsigned long long>(8 * kGossipRounds), late);
  // The loss falls for each peer that trained from the start (a late one starts from a copy).
  ASSERT_LT(late, peers.size()) << swarm.logs();
  for (const PeerProcess* p : peers) {
    if (p->rounds().front().round == 1 && p->rounds().front().kind == "committed") {
      EXPECT_LT(mean_loss(p->rounds(), kGossipRounds - 3, 3), 0.9 * mean_loss(p->rounds(), 0, 3))
          << swarm.logs();
    }
  }
}

// The step count a peer's last progress line says ("peer …: round R, step S, …"), read from its
// output up to that line.
std::uint64_t final_steps(PeerProcess& peer) {
  const auto end = peer.wait_end();
  return end ? end->step : 0;
}

// Phases clocked by time in gossip mode (strategy.round-seconds, docs/SCALE.md): a peer four times
// slower than the others takes fewer steps a phase, not longer phases, so it applies as many rounds
// as they do, in groups with them, and ends with fewer steps (in H-step phases it would hold its
// partners, and through the grid everyone, to its pace).
TEST(SwarmGossip, PhasesClockedByTimeLetASlowPeerTakeFewerStepsNotLongerRounds) {
  constexpr std::uint64_t kTimedRounds = 6;
  LocalSwarm swarm("gossip-timed", kTimedRounds, {},
                   test::kDiLoCoStrategy + "gossip-group = 2\nround-seconds = 0.5\n");
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i)
    peers.push_back(&swarm.add_peer("fast" + std::to_string(i), {"--peer.gossip-wait", "3s"}));
  peers.push_back(&swarm.add_peer("slow", {"--peer.gossip-wait", "3s", "--debug.step-slowdown", "4",
                                           "--debug.step-delay", "5"}));
  std::vector<std::uint64_t> steps;
  for (PeerProcess* p : peers) {
    steps.push_back(final_steps(*p));
    p->read_to_end();
    EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
  }
  std::size_t slow_grouped = 0;  // rounds the slow peer applied with a partner
  for (const PeerProcess* p : peers) {
    ASSERT_EQ(p->rounds().size(), kTimedRounds) << swarm.logs();
    EXPECT_EQ(p->rounds().back().round, kTimedRounds) << swarm.logs();
  }
  for (const test::RoundLine& r : peers.back()->rounds()) slow_grouped += r.members >= 2 ? 1 : 0;
  EXPECT_GT(slow_grouped, 0u) << "the slow peer averaged with partners\n" << swarm.logs();
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_LT(2 * steps.back(), steps[i]) << "fast peer " << i << "\n" << swarm.logs();
  std::printf("steps: %llu / %llu / %llu fast, %llu slow, in %llu rounds each\n",
              static_cast<unsigned long long>(steps[0]), static_cast<unsigned long long>(steps[1]),
              static_cast<unsigned long long>(steps[2]), static_cast<unsigned long long>(steps[3]),
              static_cast<unsigned long long>(kTimedRounds));
}

TEST(SwarmGossip, AGroupSizeOutsideTwoToEightIsRefusedWithTheReason) {
  LocalSwarm swarm("gossip-nine", 2, {}, test::kDiLoCoStrategy + "gossip-group = 9\n");
  EXPECT_FALSE(swarm.tracker().started());
  EXPECT_NE(swarm.tracker().log().find("strategy.gossip-group must be 0 (all-reduce mode) or in "
                                       "[2, 8], not 9"),
            std::string::npos)
      << swarm.tracker().log();
}

}  // namespace
}  // namespace loco
