// A peer's walk over the tracker's addresses (proto/tracker_addresses.hpp), which loco-peer's
// tracker link and the simulator's peers both take: the next replica almost at once, the backoff
// only after a whole pass and at most a second with several addresses, a single tracker's
// backoff as before, and a connection that comes up starting it all over.

#include "loco/proto/tracker_addresses.hpp"

#include <gtest/gtest.h>

namespace loco::proto {
namespace {

TEST(TrackerAddresses, ThreeReplicasAreWalkedInTurnWithAPauseAfterEachPass) {
  TrackerAddresses walk(3);
  EXPECT_EQ(walk.current(), 0u);
  // Pass 1: the next two at once (almost), then the backoff's first pause.
  EXPECT_EQ(walk.next(), TrackerAddresses::kNextPause);
  EXPECT_EQ(walk.current(), 1u);
  EXPECT_EQ(walk.next(), TrackerAddresses::kNextPause);
  EXPECT_EQ(walk.current(), 2u);
  EXPECT_EQ(walk.next(), std::chrono::milliseconds(500));
  EXPECT_EQ(walk.current(), 0u);
  // Pass 2 and on: the pause doubles, to a second at most.
  walk.next();
  walk.next();
  EXPECT_EQ(walk.next(), std::chrono::seconds(1));
  walk.next();
  walk.next();
  EXPECT_EQ(walk.next(), std::chrono::seconds(1));
  // A connection came up (to address 0): after its loss, the next one at once again.
  walk.connected();
  EXPECT_EQ(walk.next(), TrackerAddresses::kNextPause);
  EXPECT_EQ(walk.current(), 1u);
}

TEST(TrackerAddresses, OneTrackerBacksOffAsItAlwaysDidUpToTenSeconds) {
  TrackerAddresses walk(1);
  const Duration expected[] = {std::chrono::milliseconds(500), std::chrono::seconds(1),
                               std::chrono::seconds(2),        std::chrono::seconds(4),
                               std::chrono::seconds(8),        std::chrono::seconds(10),
                               std::chrono::seconds(10)};
  for (const Duration d : expected) {
    EXPECT_EQ(walk.next(), d);
    EXPECT_EQ(walk.current(), 0u);
  }
  walk.connected();
  EXPECT_EQ(walk.next(), std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace loco::proto
