// The bookkeeping behind the listener's bounds, without sockets: sources, caps per phase and per
// source, slots that give their place back exactly once, and refusals summarised in virtual time.

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/net/refusal_tally.hpp"
#include "loco/net/source_budget.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::make_address;
using std::chrono::seconds;

ListenerLimits small_limits() {
  return ListenerLimits{.max_handshakes = 4,
                        .max_waiting = 3,
                        .max_admitted = 4,
                        .max_pending_per_source = 2,
                        .max_admitted_per_source = 3,
                        .handshake_timeout = seconds(1),
                        .bundle_timeout = seconds(2),
                        .max_buffered_bytes = 1 << 20};
}

TEST(SourceOf, NamesAnIpv4AddressAndAnIpv6Slash64) {
  EXPECT_EQ(source_of(make_address("10.0.0.5")), "10.0.0.5");
  EXPECT_EQ(source_of(make_address("::ffff:10.0.0.5")), "10.0.0.5");
  EXPECT_EQ(source_of(make_address("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), "2001:db8:1:2::/64");
  EXPECT_EQ(source_of(make_address("2001:db8:1:2::1")), source_of(make_address("2001:db8:1:2::2")));
}

TEST(ListenerLimits, DefaultsAreValidAndBadLimitsAreRefused) {
  EXPECT_NO_THROW(validate(ListenerLimits::tracker_defaults()));
  EXPECT_NO_THROW(validate(ListenerLimits::peer_defaults()));
  EXPECT_EQ(ListenerLimits::peer_defaults().max_handshakes, 64u);
  EXPECT_EQ(ListenerLimits::peer_defaults().max_pending_per_source, 16u);
  ListenerLimits zero = small_limits();
  zero.max_pending_per_source = 0;
  EXPECT_THROW(validate(zero), Error);
  ListenerLimits late = small_limits();
  late.handshake_timeout = seconds(3);
  EXPECT_THROW(validate(late), Error);
}

TEST(SourceBudget, CapsEachPhaseInAllAndPerSource) {
  auto budget = std::make_shared<SourceBudget>(small_limits());
  std::vector<std::shared_ptr<StreamSlot>> slots;
  const auto accept = [&](const std::string& source) {
    if (budget->over_cap(StreamPhase::handshake, {source})) return false;
    slots.push_back(std::make_shared<StreamSlot>(budget, source));
    return true;
  };
  EXPECT_TRUE(accept("10.0.0.1"));
  EXPECT_TRUE(accept("10.0.0.1"));
  EXPECT_FALSE(accept("10.0.0.1"));  // its per-source share is taken
  EXPECT_TRUE(accept("10.0.0.2"));
  EXPECT_TRUE(accept("10.0.0.3"));
  EXPECT_FALSE(accept("10.0.0.4"));  // every handshake slot is taken
  EXPECT_EQ(budget->in_phase(StreamPhase::handshake), 4u);

  // Waiting counts toward the source's pending share too; the waiting cap is its own.
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(budget->over_cap(StreamPhase::waiting, {slots[i]->source()}));
    slots[i]->move_to(StreamPhase::waiting);
  }
  EXPECT_TRUE(budget->over_cap(StreamPhase::waiting, {slots[3]->source()}));
  EXPECT_EQ(budget->pending_from("10.0.0.1"), 2u);
  EXPECT_TRUE(budget->over_cap(StreamPhase::handshake, {"10.0.0.1"}));

  // Admission checks a whole bundle at once.
  EXPECT_TRUE(
      budget->over_cap(StreamPhase::admitted, {"10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.1"}));
  EXPECT_FALSE(budget->over_cap(StreamPhase::admitted, {"10.0.0.1", "10.0.0.1"}));
  slots[0]->move_to(StreamPhase::admitted);
  slots[1]->move_to(StreamPhase::admitted);
  EXPECT_EQ(budget->pending_from("10.0.0.1"), 0u);
  EXPECT_EQ(budget->admitted_from("10.0.0.1"), 2u);
  EXPECT_FALSE(budget->over_cap(StreamPhase::handshake, {"10.0.0.1"}));  // its share is back
  EXPECT_TRUE(budget->over_cap(StreamPhase::admitted, {"10.0.0.1", "10.0.0.1"}));
}

TEST(SourceBudget, EverySlotGivesItsPlaceBackOnceAndNoSourceIsKept) {
  auto budget = std::make_shared<SourceBudget>(small_limits());
  {
    auto a = std::make_shared<StreamSlot>(budget, "10.0.0.1");
    auto b = std::make_shared<StreamSlot>(budget, "10.0.0.2");
    a->move_to(StreamPhase::waiting);
    a->move_to(StreamPhase::admitted);
    EXPECT_EQ(budget->sources(), 2u);
    a->release();
    a->release();                      // idempotent
    a->move_to(StreamPhase::waiting);  // released: no effect
    EXPECT_EQ(budget->sources(), 1u);  // 10.0.0.1 has no entry left
    EXPECT_EQ(budget->admitted_from("10.0.0.1"), 0u);
  }  // b is destroyed without a release
  EXPECT_EQ(budget->sources(), 0u);
  for (const auto phase : {StreamPhase::handshake, StreamPhase::waiting, StreamPhase::admitted})
    EXPECT_EQ(budget->in_phase(phase), 0u);
}

TEST(RefusalTally, TheFirstRefusalIsLoggedAndTheRestSummarisedPerSource) {
  RefusalTally tally(seconds(10), 2);
  const TimePoint t0 = TimePoint{} + seconds(100);
  EXPECT_EQ(tally.poll_timeout(), kNever);
  EXPECT_TRUE(tally.add(t0, "10.0.0.5", "over a cap at accept"));
  EXPECT_EQ(tally.poll_timeout(), t0 + seconds(10));
  for (int i = 0; i < 511; ++i)
    EXPECT_FALSE(tally.add(t0 + seconds(1), "10.0.0.5",
                           i < 499 ? "over a cap at accept" : "bundle not complete in time"));
  for (int i = 0; i < 3; ++i) tally.add(t0 + seconds(2), "10.0.0.6", "broke the protocol");
  tally.add(t0 + seconds(2), "10.0.0.7", "broke the protocol");
  tally.add(t0 + seconds(2), "10.0.0.8", "broke the protocol");
  EXPECT_TRUE(tally.take_summary(t0 + seconds(9)).empty());  // the period has not ended
  const auto lines = tally.take_summary(t0 + seconds(10));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "dropped 512 connections from 10.0.0.5 in the last 10 s: 12 bundle not complete in "
            "time, 500 over a cap at accept");
  EXPECT_EQ(lines[1], "dropped 3 connections from 10.0.0.6 in the last 10 s: 3 broke the protocol");
  EXPECT_EQ(lines[2], "dropped 2 more connections from 2 other sources in the last 10 s");
  EXPECT_EQ(tally.poll_timeout(), kNever);
  // A new period starts with its own first refusal in full; a lone refusal needs no summary.
  EXPECT_TRUE(tally.add(t0 + seconds(30), "10.0.0.5", "broke the protocol"));
  EXPECT_TRUE(tally.take_summary(t0 + seconds(40)).empty());
  EXPECT_EQ(tally.poll_timeout(), kNever);
}

TEST(RefusalTally, TheFirstFewOfEachSourceAreLoggedAndTheRestSummarised) {
  RefusalTally tally(seconds(10), 8, 2, RefusalTally::Wording{.verb = "saw", .noun = "events"});
  const TimePoint t0 = TimePoint{} + seconds(100);
  EXPECT_TRUE(tally.add(t0, "peer a", "joined"));
  EXPECT_TRUE(tally.add(t0, "peer a", "left"));
  EXPECT_TRUE(tally.add(t0, "peer b", "joined")) << "each source its own first two";
  for (int i = 0; i < 99; ++i) EXPECT_FALSE(tally.add(t0, "peer a", i % 2 ? "left" : "joined"));
  const auto lines = tally.take_summary(t0 + seconds(10));
  ASSERT_EQ(lines.size(), 1u) << "peer b's one event was logged in full";
  EXPECT_EQ(lines[0], "saw 101 events from peer a in the last 10 s: 51 joined, 50 left");
}

}  // namespace
}  // namespace loco::net
