// The outer step scaled by the members' disagreement (disagreement_scale.hpp): a block where the
// members agree keeps the mean, one where their Δ are independent comes back √M larger, and the
// scale stays within [1, √M].

#include "loco/train/disagreement_scale.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace loco::train {
namespace {

std::vector<float> mean_of(const std::vector<std::vector<float>>& deltas) {
  std::vector<float> mean(deltas[0].size(), 0.0f);
  for (const auto& d : deltas)
    for (std::size_t i = 0; i < d.size(); ++i) mean[i] += d[i] / static_cast<float>(deltas.size());
  return mean;
}

TEST(DisagreementScale, MembersThatAgreeKeepTheMean) {
  const std::vector<std::vector<float>> deltas(4, {0.5f, -1.0f, 2.0f, 0.25f});
  std::vector<float> mean = mean_of(deltas);
  scale_by_disagreement(mean, deltas, 4);
  EXPECT_EQ(mean, deltas[0]);
}

// Four members, each moving one coordinate of its own: |Δ_i|² = 16, the mean is 1 everywhere
// (|mean|² = 4), so the block is scaled by √(16 / 4) = 2 = √M.
TEST(DisagreementScale, IndependentUpdatesComeBackRootMLarger) {
  const std::vector<std::vector<float>> deltas = {
      {4, 0, 0, 0}, {0, 4, 0, 0}, {0, 0, 4, 0}, {0, 0, 0, 4}};
  std::vector<float> mean = mean_of(deltas);
  scale_by_disagreement(mean, deltas, 4);
  EXPECT_EQ(mean, (std::vector<float>{2, 2, 2, 2}));
}

// Two members nearly cancelling: the ratio is huge, the scale stops at √2; a mean of zero stays.
TEST(DisagreementScale, TheScaleIsAtMostRootMAndZeroStaysZero) {
  const std::vector<std::vector<float>> deltas = {{1.0f, 3.0f}, {-0.9f, -3.0f}};
  std::vector<float> mean = mean_of(deltas);
  const float first = mean[0];
  scale_by_disagreement(mean, deltas, 1);
  EXPECT_FLOAT_EQ(mean[0], first * std::sqrt(2.0f));
  EXPECT_EQ(mean[1], 0.0f);
}

// Each block is judged on its own values, the last one shorter: agreeing, disagreeing, agreeing.
TEST(DisagreementScale, EachBlockIsScaledByItsOwnDisagreement) {
  const std::vector<std::vector<float>> deltas = {{1, 1, 2, 0, 5}, {1, 1, 0, 2, 5}};
  std::vector<float> mean = mean_of(deltas);  // {1, 1, 1, 1, 5}
  scale_by_disagreement(mean, deltas, 2);
  // Block 2: |Δ_i|² = 4 each, |mean|² = 2: √2, the most two members allow.
  EXPECT_EQ(mean[0], 1.0f);
  EXPECT_EQ(mean[1], 1.0f);
  EXPECT_FLOAT_EQ(mean[2], std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(mean[3], std::sqrt(2.0f));
  EXPECT_EQ(mean[4], 5.0f);
}

// Whatever the updates, a scaled block is no longer than the members' root-mean-square block.
TEST(DisagreementScale, AScaledBlockIsNoLongerThanTheMembersRootMeanSquare) {
  std::mt19937 random(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::vector<float>> deltas(3, std::vector<float>(8));
    for (auto& d : deltas)
      for (float& x : d) x = normal(random) + (trial % 2 == 0 ? 0.5f : 0.0f);
    std::vector<float> mean = mean_of(deltas);
    scale_by_disagreement(mean, deltas, 8);
    double scaled = 0, members = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      scaled += double(mean[i]) * mean[i];
      for (const auto& d : deltas) members += double(d[i]) * d[i] / 3;
    }
    EXPECT_LE(scaled, members * (1 + 1e-6)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace loco::train
