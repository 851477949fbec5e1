#include "loco/proto/awaiting_links.hpp"

#include <gtest/gtest.h>

namespace loco::proto {
namespace {

using Held = AwaitingLinks<int, int>;

TEST(AwaitingLinks, WhatWaitedForAMemberComesOutInOrderOnceItsLinkIsOpen) {
  Held awaiting;
  EXPECT_FALSE(awaiting.hold(1, 10, 100));
  EXPECT_FALSE(awaiting.hold(2, 20, 100));
  EXPECT_FALSE(awaiting.hold(1, 11, 100));
  const auto first = awaiting.release(1);
  EXPECT_EQ(first, (std::deque<int>{10, 11}));
  EXPECT_FALSE(awaiting.holds(1));
  EXPECT_TRUE(awaiting.release(1).empty()) << "released once";
  EXPECT_TRUE(awaiting.holds(2)) << "another member's messages stay";
  awaiting.forget(2);
  EXPECT_TRUE(awaiting.release(2).empty()) << "its link is gone: nothing is sent";
}

TEST(AwaitingLinks, AMemberThatNeverDialsCostsAtMostTheBoundInMessages) {
  Held awaiting;
  for (std::size_t i = 0; i < kMaxAwaitingMessages; ++i)
    ASSERT_FALSE(awaiting.hold(1, static_cast<int>(i), 1));
  EXPECT_FALSE(awaiting.hold(2, 0, 1)) << "the bound is per member";
  const auto overflow = awaiting.hold(1, -1, 1);
  ASSERT_TRUE(overflow);
  EXPECT_EQ(overflow->messages, kMaxAwaitingMessages);
  EXPECT_EQ(overflow->bytes, kMaxAwaitingMessages);
  EXPECT_FALSE(awaiting.holds(1)) << "everything held for it is dropped";
  EXPECT_TRUE(awaiting.holds(2));
}

TEST(AwaitingLinks, AMemberThatNeverDialsCostsAtMostTheBoundInBytes) {
  Held awaiting;
  EXPECT_FALSE(awaiting.hold(1, 1, kMaxAwaitingBytes - 10));
  EXPECT_FALSE(awaiting.hold(1, 2, 10)) << "up to the bound exactly";
  const auto overflow = awaiting.hold(1, 3, 1);
  ASSERT_TRUE(overflow);
  EXPECT_EQ(overflow->messages, 2u);
  EXPECT_EQ(overflow->bytes, kMaxAwaitingBytes);
  EXPECT_FALSE(awaiting.holds(1));
  EXPECT_FALSE(awaiting.hold(1, 4, 1)) << "a link asked for again starts from nothing";
}

}  // namespace
}  // namespace loco::proto
