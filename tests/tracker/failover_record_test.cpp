// How a replica came to lead (tracker/failover_record.hpp), from the looks its driver reports.

#include "tracker/failover_record.hpp"

#include <gtest/gtest.h>

namespace loco::tracker {
namespace {

TEST(FailoverRecord, TheFirstLeaderTookOverFromNoOne) {
  FailoverRecord record;
  EXPECT_EQ(record.last().unix_ms, 0u);  // not led yet
  record.took_lead({.value = "b", .term = 12}, 5'000);
  EXPECT_EQ(record.last(),
            (proto::Failover{
                .unix_ms = 5'000, .from = "", .from_term = 0, .to_term = 12, .leaderless_ms = 0}));
}

TEST(FailoverRecord, AFollowerTakesOverFromTheLastLeaderItSaw) {
  FailoverRecord record;
  record.saw({.value = "a", .term = 10}, 1'000);
  record.saw({.value = "a", .term = 10}, 1'250);  // its key lingers until its lease expires
  record.took_lead({.value = "b", .term = 12}, 3'650);
  EXPECT_EQ(
      record.last(),
      (proto::Failover{
          .unix_ms = 3'650, .from = "a", .from_term = 10, .to_term = 12, .leaderless_ms = 2'400}));
  // Its own looks while it leads change nothing until it leads again.
  record.saw({.value = "b", .term = 12}, 9'000);
  EXPECT_EQ(record.last().from_term, 10u);
}

TEST(FailoverRecord, ADeposedLeaderLeadingAgainTookOverFromItself) {
  FailoverRecord record;
  record.took_lead({.value = "b", .term = 12}, 1'000);
  record.took_lead({.value = "b", .term = 20}, 4'000);  // deposed before its first look
  EXPECT_EQ(
      record.last(),
      (proto::Failover{
          .unix_ms = 4'000, .from = "b", .from_term = 12, .to_term = 20, .leaderless_ms = 3'000}));
}

TEST(FailoverRecord, AWallClockSteppedBackIsNoGap) {
  FailoverRecord record;
  record.saw({.value = "a", .term = 10}, 9'000);
  record.took_lead({.value = "b", .term = 12}, 4'000);
  EXPECT_EQ(record.last().leaderless_ms, 0u);
  EXPECT_EQ(record.last().from, "a");
}

}  // namespace
}  // namespace loco::tracker
