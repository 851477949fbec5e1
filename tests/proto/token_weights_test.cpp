// The rule that weighs a time-bounded round's updates by their tokens (token_weights.hpp): claims
// rounded to whole steps, at least one step, at most max_ratio × the lower median; the weights a
// member's update counts for sum to N.

#include "loco/proto/token_weights.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {
namespace {

constexpr std::uint64_t kStep = 1024;  // tokens of one step
const TokenWeighting kWeighting{.step_tokens = kStep, .max_ratio = 2};

TEST(TokenWeights, HonestClaimsCountAsWholeStepsAndUnequalPacesKeepTheirRatio) {
  // Three members at 30 steps, one three times slower at 10.
  EXPECT_EQ(weigh_tokens(std::vector<std::uint64_t>{30 * kStep, 10 * kStep, 30 * kStep, 30 * kStep},
                         kWeighting),
            (std::vector<std::uint64_t>{30 * kStep, 10 * kStep, 30 * kStep, 30 * kStep}));
  // Part of a step rounds down; nothing, or less than a step, counts as the one step every
  // member takes.
  EXPECT_EQ(weigh_tokens(std::vector<std::uint64_t>{3 * kStep + 5, 0, kStep - 1}, kWeighting),
            (std::vector<std::uint64_t>{2 * kStep, kStep, kStep}))
      << "the lower median is one step: no one counts for more than two";
  EXPECT_TRUE(weigh_tokens(std::vector<std::uint64_t>{5, 6}, TokenWeighting{}).empty())
      << "no step size: fixed-H rounds, the plain mean";
}

// One liar among N claims as much as it can: its share of the weight stays within
// max_ratio / (max_ratio + ⌈(N + 1)/2⌉ − 1), the bound the header writes.
TEST(TokenWeights, ALiarsShareOfTheWeightIsBounded) {
  for (const std::size_t n : {2, 3, 4, 5, 8}) {
    std::vector<std::uint64_t> claims(n, 20 * kStep);
    claims[n / 2] = std::numeric_limits<std::uint64_t>::max();
    const std::vector<std::uint64_t> tokens = weigh_tokens(claims, kWeighting);
    const double total = std::accumulate(tokens.begin(), tokens.end(), 0.0);
    const double share = static_cast<double>(tokens[n / 2]) / total;
    const double bound = 2.0 / (2.0 + static_cast<double>((n + 2) / 2) - 1.0);
    EXPECT_LE(share, bound + 1e-12) << n << " members";
    EXPECT_EQ(tokens[n / 2], 40 * kStep) << "twice the others', no more";
  }
  // Liars that claim little only lower their own weight; many honest slow ones keep theirs.
  const auto tokens = weigh_tokens(
      std::vector<std::uint64_t>{kStep, 30 * kStep, 30 * kStep, 30 * kStep, 30 * kStep},
      kWeighting);
  EXPECT_EQ(tokens[0], kStep);
  EXPECT_EQ(tokens[1], 30 * kStep);
}

TEST(TokenWeights, AClaimBeyondTheWireBoundIsCutToIt) {
  const auto tokens =
      weigh_tokens(std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max(),
                                              std::numeric_limits<std::uint64_t>::max()},
                   kWeighting);
  EXPECT_LE(tokens[0], kMaxRoundTokens);
  EXPECT_EQ(tokens[0], tokens[1]);
}

TEST(TokenWeights, WeightsSumToTheGroupsSizeAndEqualTokensWeighOne) {
  EXPECT_EQ(contribution_weights(std::vector<std::uint64_t>{7, 7, 7}),
            (std::vector<float>{1.0f, 1.0f, 1.0f}))
      << "equal tokens: exactly the plain mean's factors";
  const std::vector<float> w = contribution_weights(std::vector<std::uint64_t>{3, 1, 3, 3});
  EXPECT_FLOAT_EQ(w[0], 1.2f);
  EXPECT_FLOAT_EQ(w[1], 0.4f);
  EXPECT_FLOAT_EQ(std::accumulate(w.begin(), w.end(), 0.0f), 4.0f);
  EXPECT_TRUE(contribution_weights({}).empty());
}

}  // namespace
}  // namespace loco::proto
