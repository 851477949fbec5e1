// Gossip mode's rosters end to end through the tracker core and its clients (gossip_roster.hpp):
// the tracker stamps each membership change with the round it takes effect from, and every client
// then gives the same roster for a round whatever view it held when it asked.

#include <gtest/gtest.h>

#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;

Harness gossip_tracker() {
  Harness h;
  h.config.gossip = true;
  h.start();
  return h;
}

// Peer n reports that it applied round `round`.
void reports(Harness& h, std::uint8_t n, std::uint64_t round) {
  h.peers.at(n).client->set_state(round, digest_of(round));
  h.peers.at(n).client->state_report();
  h.pump();
}

// The peers apply rounds 1, 2, ... up to their own target, a round a second, as a run does: none
// gets ahead of the round most are at by more than the tracker takes (newest_plausible_round).
void walk(Harness& h, const std::map<std::uint8_t, std::uint64_t>& targets) {
  std::uint64_t last = 0;
  for (const auto& [n, target] : targets) last = std::max(last, target);
  for (std::uint64_t round = 1; round <= last; ++round) {
    for (const auto& [n, target] : targets)
      if (round <= target) reports(h, n, round);
    h.run_for(1s);
  }
}

std::uint64_t first_round_of(const Harness& h, std::uint8_t viewer, std::uint8_t n) {
  const Member* m = h.peers.at(viewer).client->member(h.peers.at(n).key.public_key());
  EXPECT_NE(m, nullptr) << "peer " << int{viewer} << " does not list peer " << int{n};
  return m == nullptr ? 0 : m->first_round;
}

std::vector<PeerKey> keys(const Harness& h, std::initializer_list<std::uint8_t> ns) {
  std::vector<PeerKey> out;
  for (const std::uint8_t n : ns) out.push_back(h.peers.at(n).key.public_key());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TrackerRoster, MembersAreListedFromTheLeadPastTheNewestRoundReported) {
  Harness h = gossip_tracker();
  h.join(1);
  h.join(2);
  h.run_for(5s);
  EXPECT_EQ(first_round_of(h, 1, 1), 2u) << "no round applied yet: 0 + lead 2";
  EXPECT_EQ(first_round_of(h, 1, 2), 2u);
  walk(h, {{1, 7}, {2, 6}});
  h.join(3);
  h.run_for(5s);
  EXPECT_EQ(first_round_of(h, 1, 3), 9u) << "newest round reported 7, + lead 2";
  EXPECT_EQ(first_round_of(h, 3, 3), 9u) << "the newcomer's full view says the same";
  EXPECT_EQ(first_round_of(h, 1, 1), 2u) << "members already listed keep their round";
  EXPECT_EQ(h.peers.at(1).client->gossip_roster(8), keys(h, {1, 2}));
  EXPECT_EQ(h.peers.at(1).client->gossip_roster(9), keys(h, {1, 2, 3}));
}

TEST(TrackerRoster, ARemovedMemberStaysOnTheRostersOfTheRoundsBeforeItsRemovalTakesEffect) {
  Harness h = gossip_tracker();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  h.run_for(5s);
  walk(h, {{1, 4}, {2, 4}});
  h.disconnect(3);  // leaves at round 4 reported: gone from the rosters of round 6 on
  h.run_for(5s);
  auto& client = *h.peers.at(1).client;
  EXPECT_FALSE(client.is_member(h.peers.at(3).key.public_key()));
  EXPECT_EQ(client.gossip_roster(5), keys(h, {1, 2, 3})) << "a grouping members may have begun";
  EXPECT_EQ(client.gossip_roster(6), keys(h, {1, 2}));
  EXPECT_FALSE(client.present_in_round(h.peers.at(3).key.public_key(), 5))
      << "on the roster, but gone: its group drops it";
  client.forget_removals_before(6);
  EXPECT_EQ(client.gossip_roster(6), keys(h, {1, 2}));
  EXPECT_EQ(client.gossip_roster(5), keys(h, {1, 2})) << "forgotten: the peer is past round 5";
}

TEST(TrackerRoster, APeerThatJoinsAgainIsANewProcessListedFromARoundToCome) {
  Harness h = gossip_tracker();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  h.run_for(5s);
  walk(h, {{1, 10}, {2, 10}, {3, 10}});
  // Peer 3 restarts and joins again before the tracker noticed it was gone.
  h.peers.at(3).connected = false;
  h.join(3);
  h.run_for(5s);
  auto& client = *h.peers.at(1).client;
  const PeerKey three = h.peers.at(3).key.public_key();
  EXPECT_EQ(first_round_of(h, 1, 3), 12u);
  EXPECT_EQ(client.gossip_roster(11), keys(h, {1, 2, 3})) << "the old process's rounds: listed";
  EXPECT_FALSE(client.present_in_round(three, 11)) << "but the old process is gone";
  EXPECT_TRUE(client.present_in_round(three, 12));
}

TEST(TrackerRoster, TheHeartbeatAckGivesTheRoundMostMembersTrainFor) {
  Harness h = gossip_tracker();
  for (std::uint8_t n = 1; n <= 5; ++n) h.join(n);
  walk(h, {{1, 3}, {2, 4}, {3, 4}, {4, 4}, {5, 6}});
  h.run_for(5s);  // a heartbeat each, acked
  for (std::uint8_t n = 1; n <= 5; ++n)
    EXPECT_EQ(h.peers.at(n).client->next_round(), 5u) << "the median state round 4, + 1";
}

}  // namespace
}  // namespace loco::proto
