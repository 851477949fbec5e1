// GossipRoster alone: which members a round groups, from views and the entries they replaced.

#include "loco/proto/gossip_roster.hpp"

#include <gtest/gtest.h>

namespace loco::proto {
namespace {

// Keys in the order of n, as views list their members.
PeerKey member_key(std::uint8_t n) {
  PeerKey k{};
  k.bytes[0] = n;
  return k;
}

Member member(std::uint8_t n, std::uint64_t first_round) {
  return Member{
      .key = member_key(n), .address = {}, .shard = 0, .upload_bps = 0, .first_round = first_round};
}

View view(std::vector<Member> members) {
  return View{.epoch = 1, .members = std::move(members)};
}

std::vector<PeerKey> keys(std::initializer_list<std::uint8_t> ns) {
  std::vector<PeerKey> out;
  for (const std::uint8_t n : ns) out.push_back(member_key(n));
  return out;
}

TEST(GossipRoster, ARoundListsTheMembersFromTheirFirstRoundOn) {
  const GossipRoster roster;
  const View v = view({member(1, 2), member(2, 2), member(3, 5)});
  EXPECT_EQ(roster.members_of_round(v, 1), keys({}));
  EXPECT_EQ(roster.members_of_round(v, 4), keys({1, 2}));
  EXPECT_EQ(roster.members_of_round(v, 5), keys({1, 2, 3}));
  EXPECT_FALSE(present_in_round(v, member_key(3), 4));
  EXPECT_TRUE(present_in_round(v, member_key(3), 5));
  EXPECT_FALSE(present_in_round(v, member_key(9), 5));
}

TEST(GossipRoster, AMemberRemovedStaysListedUntilTheRoundItsRemovalTakesEffect) {
  GossipRoster roster;
  const View after = view({member(1, 2), member(3, 2)});
  const Member two = member(2, 2);
  roster.record(std::span(&two, 1), after, 7);
  EXPECT_EQ(roster.members_of_round(after, 6), keys({1, 2, 3}));
  EXPECT_EQ(roster.members_of_round(after, 7), keys({1, 3}));
  EXPECT_FALSE(present_in_round(after, member_key(2), 6));
}

TEST(GossipRoster, AMemberListedAgainFromALaterRoundKeepsItsEarlierRounds) {
  GossipRoster roster;
  const View after = view({member(1, 2), member(2, 9)});  // 2 came back as a new process
  const Member old_two = member(2, 2);
  roster.record(std::span(&old_two, 1), after, 0);
  for (std::uint64_t r = 2; r <= 10; ++r)
    EXPECT_EQ(roster.members_of_round(after, r), keys({1, 2})) << "round " << r;
  EXPECT_FALSE(present_in_round(after, member_key(2), 8));
  EXPECT_TRUE(present_in_round(after, member_key(2), 9));
}

TEST(GossipRoster, AFullViewWithoutAMemberDropsItAtOnce) {
  GossipRoster roster;
  const View before = view({member(1, 2), member(2, 2)});
  const View after = view({member(1, 2)});
  roster.record(before.members, after, 0);
  EXPECT_EQ(roster.members_of_round(after, 3), keys({1}));
}

TEST(GossipRoster, EntriesNoLaterRoundNeedsAreForgotten) {
  GossipRoster roster;
  const View after = view({member(1, 2)});
  const std::vector<Member> removed = {member(2, 2), member(3, 2)};
  roster.record(std::span(removed.data(), 1), after, 5);
  roster.record(std::span(removed.data() + 1, 1), after, 8);
  roster.forget_before(6);
  EXPECT_EQ(roster.members_of_round(after, 4), keys({1, 3})) << "2's entry is gone";
  EXPECT_EQ(roster.members_of_round(after, 7), keys({1, 3}));
  EXPECT_EQ(roster.members_of_round(after, 8), keys({1}));
}

}  // namespace
}  // namespace loco::proto
