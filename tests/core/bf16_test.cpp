// bf16 <-> fp32 (core/bf16.hpp): exact one way, round to nearest even the other, NaN kept.

#include "loco/core/bf16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace loco {
namespace {

float from_bits(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}

TEST(Bf16, EveryBf16IsAnFp32AndComesBackUnchanged) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto value = static_cast<std::uint16_t>(b);
    const float f = bf16_to_float(value);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(f)))) << b;
      continue;
    }
    EXPECT_EQ(float_to_bf16(f), value) << b;
  }
}

TEST(Bf16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(float_to_bf16(from_bits(0x3f800000u)), 0x3f80u);  // 1.0
  EXPECT_EQ(float_to_bf16(from_bits(0x3f807fffu)), 0x3f80u);  // below the half: down
  EXPECT_EQ(float_to_bf16(from_bits(0x3f808001u)), 0x3f81u);  // above the half: up
  EXPECT_EQ(float_to_bf16(from_bits(0x3f808000u)), 0x3f80u);  // a tie to the even 0x3f80
  EXPECT_EQ(float_to_bf16(from_bits(0x3f818000u)), 0x3f82u);  // a tie to the even 0x3f82
  EXPECT_EQ(float_to_bf16(from_bits(0xbf808001u)), 0xbf81u);  // the sign kept
}

TEST(Bf16, PastTheLargestFiniteIsInfinityAndANanStaysANan) {
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80u);  // rounds up to inf
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80u);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80u);
  // A NaN whose payload is all in the low half: rounding would carry it into +inf.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(from_bits(0x7f800001u)))));
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(from_bits(0xffffffffu)))));
}

}  // namespace
}  // namespace loco
