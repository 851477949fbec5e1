// sim::ManifestMemo hands out the manifest a fresh hash gives, and hashes any state that differs.
#include "loco/sim/manifest_memo.hpp"

#include <gtest/gtest.h>

namespace loco::sim {
namespace {

PeerState state_of(std::uint64_t round, float first) {
  PeerState s{.round = round,
              .theta = std::vector<float>(4096, 0.5f),
              .momentum = std::vector<float>(4096, 0.0f)};
  s.theta[0] = first;
  return s;
}

TEST(ManifestMemo, GivesTheFreshManifestAndHashesEveryOtherState) {
  ManifestMemo memo(2);
  const PeerState a = state_of(1, 1.0f);
  EXPECT_EQ(memo.manifest(a), a.manifest());
  EXPECT_EQ(memo.manifest(a), a.manifest());  // remembered
  EXPECT_EQ(memo.hashed(), 1u);
  const PeerState b = state_of(1, 2.0f);  // one value differs
  EXPECT_EQ(memo.manifest(b), b.manifest());
  const PeerState c = state_of(2, 1.0f);  // the same values at another round
  EXPECT_EQ(memo.manifest(c), c.manifest());
  EXPECT_EQ(memo.hashed(), 3u);
  EXPECT_EQ(memo.manifest(a), a.manifest());  // forgotten: two states are kept
  EXPECT_EQ(memo.hashed(), 4u);
}

}  // namespace
}  // namespace loco::sim
