// Σ v² as the round's norm checks take it: against a plain double sum, on every length around the
// eight lanes, and not finite exactly when a value is not.

#include "loco/core/sum_of_squares.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "loco/core/rng.hpp"

namespace loco {
namespace {

TEST(SumOfSquares, AgreesWithAPlainSumOnEveryLength) {
  Rng rng(3);
  for (const std::size_t n : std::vector<std::size_t>{0, 1, 7, 8, 9, 15, 16, 17, 1000, 65539}) {
    std::vector<float> values(n);
    double plain = 0;
    for (float& v : values) {
      v = rng.normal();
      plain += static_cast<double>(v) * v;
    }
    EXPECT_NEAR(sum_of_squares(values), plain, 1e-12 * (1 + plain)) << n << " values";
  }
  EXPECT_EQ(sum_of_squares(std::vector<float>{3.0f, 4.0f}), 25.0);
}

TEST(SumOfSquares, IsNotFiniteExactlyWhenAValueIsNot) {
  std::vector<float> values(37, std::numeric_limits<float>::max());  // squares overflow no double
  EXPECT_TRUE(std::isfinite(sum_of_squares(values)));
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
        -std::numeric_limits<float>::infinity()}) {
    for (const std::size_t at : std::vector<std::size_t>{0, 5, 32, 36}) {
      std::vector<float> with = values;
      with[at] = bad;
      EXPECT_FALSE(std::isfinite(sum_of_squares(with))) << "value " << at;
    }
  }
}

}  // namespace
}  // namespace loco
