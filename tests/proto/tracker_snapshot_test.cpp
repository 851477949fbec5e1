// The tracker state's encoding at its bound: kMaxSnapshotBytes is what the largest state takes,
// and a reader refuses more before it reads a field.

#include "loco/proto/tracker_snapshot.hpp"

#include <gtest/gtest.h>

#include "../support/largest_snapshot.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

TEST(TrackerSnapshot, TheLargestStateIsTheBoundAndComesBack) {
  const TrackerSnapshot largest = test::largest_snapshot();
  const std::vector<std::byte> bytes = encode(largest);
  EXPECT_EQ(bytes.size(), kMaxSnapshotBytes);
  EXPECT_EQ(decode_snapshot(bytes, "largest"), largest);

  // A list past its bound is cut to its newest items, so nothing encodes larger.
  TrackerSnapshot more = largest;
  more.barred.push_back({.key = test::numbered_key(1'000'000), .remaining_ms = 1});
  EXPECT_EQ(encode(more).size(), kMaxSnapshotBytes);
}

TEST(TrackerSnapshot, MoreBytesThanAnyStateAreRefusedBeforeTheyAreRead) {
  TrackerSnapshot small;
  small.run_id = "run";
  std::vector<std::byte> bytes = encode(small);
  bytes.resize(kMaxSnapshotBytes + 1);
  try {
    decode_snapshot(bytes, "huge");
    ADD_FAILURE() << "a state larger than the bound was read";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("more than any state"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace loco::proto
