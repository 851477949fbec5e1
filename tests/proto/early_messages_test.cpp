#include "loco/proto/early_messages.hpp"

#include <gtest/gtest.h>

#include "loco/secure/identity.hpp"

namespace loco::proto {
namespace {

std::vector<std::byte> body(std::uint8_t tag) {
  return {std::byte{tag}};
}

TEST(EarlyMessages, TheCurrentCollectivesComeOutInOrderAndLaterOnesWait) {
  const PeerKey a = secure::KeyPair::generate().public_key();
  EarlyMessages early(8);
  // A member an attempt ahead: its part of attempt 6 arrives before this member starts attempt 5.
  EXPECT_TRUE(early.keep({4, 6}, a, MessageType::ring_chunk, body(1)));
  EXPECT_TRUE(early.keep({4, 5}, a, MessageType::ring_chunk, body(2)));
  EXPECT_TRUE(early.keep({4, 5}, a, MessageType::ring_chunk, body(3)));
  EXPECT_TRUE(early.keep({3, 9}, a, MessageType::ring_chunk, body(4)));  // an old round's
  const auto fifth = early.take({4, 5});
  ASSERT_EQ(fifth.size(), 2u);
  EXPECT_EQ(fifth[0].body, body(2));
  EXPECT_EQ(fifth[1].body, body(3));
  EXPECT_EQ(early.size(), 1u) << "attempt 6's part waits; round 3's is forgotten";
  const auto sixth = early.take({4, 6});
  ASSERT_EQ(sixth.size(), 1u);
  EXPECT_EQ(sixth[0].body, body(1));
  EXPECT_EQ(sixth[0].from, a);
  EXPECT_EQ(early.size(), 0u);
}

TEST(EarlyMessages, NoMoreThanItsCapacityWait) {
  const PeerKey a = secure::KeyPair::generate().public_key();
  EarlyMessages early(2);
  EXPECT_TRUE(early.keep({1, 1}, a, MessageType::all_gather_part, body(1)));
  EXPECT_TRUE(early.keep({1, 1}, a, MessageType::all_gather_part, body(2)));
  EXPECT_FALSE(early.keep({1, 1}, a, MessageType::all_gather_part, body(3)));
  EXPECT_EQ(early.take({1, 1}).size(), 2u);
  EXPECT_TRUE(early.keep({1, 2}, a, MessageType::all_gather_part, body(4))) << "room again";
}

}  // namespace
}  // namespace loco::proto
