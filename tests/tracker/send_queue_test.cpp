// The tracker's outbox (tracker/send_queue.hpp): replies ahead of broadcasts, and a budget on the
// bytes of everything else in flight that holds broadcasts while replies still flow.

#include "tracker/send_queue.hpp"

#include <gtest/gtest.h>

namespace loco::tracker {
namespace {

using proto::MessageType;
using std::chrono::milliseconds;

constexpr TimePoint kT0 = TimePoint(std::chrono::hours(1));
constexpr Duration kLimit = std::chrono::seconds(2);

proto::PeerKey peer(std::uint8_t n) {
  proto::PeerKey key{};
  key.bytes[0] = n;
  return key;
}

proto::Transmit message(std::uint8_t to, MessageType type, std::size_t bytes) {
  return proto::Transmit{
      .to = peer(to), .type = type, .body = std::make_shared<const std::vector<std::byte>>(bytes)};
}

TEST(SendQueue, AnAckQueuedAfterALargeBroadcastLeavesFirst) {
  SendQueue queue(std::size_t{1} << 30, kLimit);
  for (std::uint8_t m = 1; m <= 3; ++m) queue.push(message(m, MessageType::view, 700'000));
  queue.push(message(2, MessageType::heartbeat_ack, 20));
  queue.push(message(4, MessageType::join_reply, 200));
  const std::vector<std::pair<std::uint8_t, MessageType>> expected = {
      {2, MessageType::heartbeat_ack},
      {4, MessageType::join_reply},
      {1, MessageType::view},
      {2, MessageType::view},
      {3, MessageType::view}};
  std::vector<std::shared_ptr<const void>> holds;
  for (const auto& [to, type] : expected) {
    auto out = queue.pop(kT0);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->transmit.to, peer(to));
    EXPECT_EQ(out->transmit.type, type);
    EXPECT_EQ(out->hold == nullptr, SendQueue::is_reply(type)) << "only the rest is counted";
    holds.push_back(std::move(out->hold));
  }
  EXPECT_TRUE(queue.empty());
  EXPECT_EQ(queue.in_flight_bytes(), 3u * 700'000);
}

TEST(SendQueue, EverythingButRepliesKeepsTheCoresOrder) {
  SendQueue queue(std::size_t{1} << 30, kLimit);
  queue.push(message(1, MessageType::view_delta, 300));
  queue.push(message(1, MessageType::group, 50));
  queue.push(message(1, MessageType::commit, 50));
  queue.push(message(1, MessageType::resync, 50));
  for (const MessageType type :
       {MessageType::view_delta, MessageType::group, MessageType::commit, MessageType::resync}) {
    auto out = queue.pop(kT0);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->transmit.type, type);
  }
  EXPECT_FALSE(queue.pop(kT0));
}

TEST(SendQueue, TheBudgetHoldsBroadcastsWhileAcksStillFlow) {
  int releases = 0;
  SendQueue queue(1'000, kLimit, [&] { ++releases; });
  for (std::uint8_t m = 1; m <= 4; ++m) queue.push(message(m, MessageType::view, 600));
  auto first = queue.pop(kT0);   // 600 in flight: under the budget, so one more may go
  auto second = queue.pop(kT0);  // 1,200: over it
  ASSERT_TRUE(first && second);
  EXPECT_EQ(queue.in_flight_bytes(), 1'200u);
  EXPECT_FALSE(queue.ready(kT0));
  EXPECT_FALSE(queue.pop(kT0)) << "the third view waits for the budget";

  queue.push(message(9, MessageType::heartbeat_ack, 20));
  EXPECT_TRUE(queue.ready(kT0));
  auto ack = queue.pop(kT0);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->transmit.type, MessageType::heartbeat_ack);
  EXPECT_FALSE(queue.pop(kT0));
  EXPECT_EQ(releases, 0);

  // The connection took the first view (or ended): its bytes come back and the next may go.
  first.reset();
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(queue.in_flight_bytes(), 600u);
  auto third = queue.pop(kT0);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->transmit.to, peer(3));
  EXPECT_FALSE(queue.pop(kT0));
  EXPECT_EQ(queue.size(), 1u);
}

TEST(SendQueue, OneMessageLargerThanTheBudgetStillGoes) {
  SendQueue queue(1'000, kLimit);
  queue.push(message(1, MessageType::view, 5'000));
  queue.push(message(2, MessageType::view, 10));
  auto big = queue.pop(kT0);
  ASSERT_TRUE(big);
  EXPECT_FALSE(queue.pop(kT0));
  big.reset();
  EXPECT_TRUE(queue.pop(kT0));
}

TEST(SendQueue, HoldsSharedByACallbackGiveBackOnceAndNothingAfterTheQueueIsGone) {
  std::shared_ptr<const void> kept;
  {
    int releases = 0;
    SendQueue queue(100, kLimit, [&] { ++releases; });
    queue.push(message(1, MessageType::view_delta, 80));
    queue.push(message(2, MessageType::view_delta, 80));
    auto out = queue.pop(kT0);
    ASSERT_TRUE(out);
    std::shared_ptr<const void> copy = out->hold;  // as a bundle's stripes share their callback
    out->hold.reset();
    EXPECT_EQ(queue.in_flight_bytes(), 80u);
    copy.reset();
    EXPECT_EQ(releases, 1);
    EXPECT_EQ(queue.in_flight_bytes(), 0u);
    kept = queue.pop(kT0)->hold;
    queue.clear();
    EXPECT_TRUE(queue.empty());
    EXPECT_EQ(queue.in_flight_bytes(), 80u) << "what was handed on stays counted";
  }
  kept.reset();  // the queue is gone: nothing to give back to, nothing called
}

TEST(SendQueue, AReaderThatNeverTakesItsViewHoldsTheBudgetForTheHoldLimitOnly) {
  int releases = 0;
  SendQueue queue(1'000, kLimit, [&] { ++releases; });
  queue.push(message(1, MessageType::view, 5'000));  // to a member that stopped reading
  queue.push(message(2, MessageType::commit, 100));
  auto stuck = queue.pop(kT0);
  ASSERT_TRUE(stuck);
  EXPECT_FALSE(queue.pop(kT0 + kLimit - milliseconds(1))) << "the budget holds the commit";
  EXPECT_EQ(queue.next_expiry(), kT0 + kLimit) << "when the driver tries again";

  auto commit = queue.pop(kT0 + kLimit);
  ASSERT_TRUE(commit) << "the stuck view counts no more";
  EXPECT_EQ(commit->transmit.type, MessageType::commit);
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(queue.in_flight_bytes(), 100u);
  EXPECT_EQ(queue.next_expiry(), kNever) << "nothing waits";

  stuck.reset();  // its connection ends at last: its bytes were given back already
  EXPECT_EQ(queue.in_flight_bytes(), 100u);
  EXPECT_EQ(releases, 1);
  commit.reset();
  EXPECT_EQ(queue.in_flight_bytes(), 0u);
  EXPECT_EQ(releases, 2);
}

// Issue 50: during a mass join the outbox held ~38,000 messages, and a member evicted meanwhile
// stayed connected (and went on as a member) until all of them were out.
TEST(SendQueue, APeerCutOffLosesWhatWaitsForItButItsRepliesAndNoOneElseLosesAnything) {
  SendQueue queue(std::size_t{1} << 30, kLimit);
  queue.push(message(1, MessageType::view, 600));
  queue.push(message(2, MessageType::view, 600));
  queue.push(message(1, MessageType::view_delta, 50));
  queue.push(message(3, MessageType::group, 50));
  auto first = queue.pop(kT0);
  ASSERT_TRUE(first);
  queue.push(message(2, MessageType::join_reply, 20));  // a refusal: why it is cut off
  queue.push(message(2, MessageType::commit, 50));
  EXPECT_TRUE(queue.holds(peer(2)));

  queue.drop(peer(2));
  EXPECT_TRUE(queue.holds(peer(2))) << "its reply still waits";
  queue.drop(peer(4));  // nothing waits for it: nothing happens
  EXPECT_EQ(queue.size(), 3u);

  auto reply = queue.pop(kT0);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->transmit.to, peer(2));
  EXPECT_EQ(reply->transmit.type, MessageType::join_reply);
  EXPECT_FALSE(queue.holds(peer(2))) << "its connection may be closed now";

  // The others' messages, in the core's order, untouched.
  std::vector<std::shared_ptr<const void>> holds;
  for (const auto& [to, type] : std::vector<std::pair<std::uint8_t, MessageType>>{
           {1, MessageType::view_delta}, {3, MessageType::group}}) {
    auto out = queue.pop(kT0);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->transmit.to, peer(to));
    EXPECT_EQ(out->transmit.type, type);
    holds.push_back(std::move(out->hold));
  }
  EXPECT_TRUE(queue.empty());
  EXPECT_FALSE(queue.holds(peer(1)));
  EXPECT_FALSE(queue.holds(peer(3)));
}

TEST(SendQueue, APeerCutOffWithOnlyBroadcastsWaitingIsHeldForNothing) {
  SendQueue queue(std::size_t{1} << 30, kLimit);
  for (int i = 0; i < 1'000; ++i) {
    queue.push(message(1, MessageType::view_delta, 100));
    queue.push(message(2, MessageType::view_delta, 100));
  }
  queue.drop(peer(1));
  EXPECT_FALSE(queue.holds(peer(1)));
  EXPECT_EQ(queue.size(), 1'000u);
  queue.push(message(1, MessageType::view, 100));  // after it joined again: sent
  EXPECT_TRUE(queue.holds(peer(1)));
  queue.clear();
  EXPECT_FALSE(queue.holds(peer(1)));
  EXPECT_FALSE(queue.holds(peer(2)));
}

}  // namespace
}  // namespace loco::tracker
