// Safetensors files written by other tools: no loco digest, no "__metadata__", header order
// unlike data order, and half-precision dtypes. They load; their values arrive as fp32.

#include "../support/foreign_safetensors.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

using test::f32_bytes;
using test::ForeignTensor;
using ::testing::HasSubstr;

SafetensorsFile parse(const std::string& bytes) {
  return SafetensorsFile::parse(std::as_bytes(std::span(bytes.data(), bytes.size())), "foreign");
}

const double kTenth = 0.1;

// Little-endian 16-bit words.
std::string u16_bytes(const std::vector<std::uint16_t>& words) {
  std::string out;
  for (std::uint16_t w : words) {
    out += static_cast<char>(w & 0xff);
    out += static_cast<char>(w >> 8);
  }
  return out;
}

TEST(ForeignSafetensors, ReadsAFileWithoutDigestOrMetadata) {
  const std::vector<float> w = {1.5f, -2.0f, 0.25f, 8.0f, -0.0f, 3.0f};
  const std::vector<float> b = {7.0f, -7.0f};
  const SafetensorsFile file = parse(test::foreign_safetensors({{"w", "F32", {2, 3}, f32_bytes(w)},
                                                                {"empty", "F32", {0}, ""},
                                                                {"b", "F32", {2}, f32_bytes(b)}}));
  EXPECT_TRUE(file.metadata().empty());
  EXPECT_FALSE(file.has_digest());
  EXPECT_EQ(file.names(), (std::vector<std::string>{"b", "empty", "w"}));  // data order
  EXPECT_EQ(file.tensor("w").shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_THAT(file.tensor("w").data, ::testing::ElementsAreArray(w));
  EXPECT_THAT(file.tensor("b").data, ::testing::ElementsAreArray(b));
  EXPECT_TRUE(file.tensor("empty").data.empty());
}

TEST(ForeignSafetensors, KeepsMetadataWithoutDigest) {
  const SafetensorsFile file = parse(
      test::foreign_safetensors({{"x", "F32", {1}, f32_bytes({4.0f})}}, "{\"format\":\"pt\"}"));
  EXPECT_EQ(file.metadata(), (Metadata{{"format", "pt"}}));
  EXPECT_EQ(file.tensor("x").data[0], 4.0f);
}

TEST(ForeignSafetensors, ConvertsHalfPrecisionExactly) {
  // F16: 1, -2, 65504 (largest), 2⁻²⁴ (smallest subnormal), -0, +inf, NaN.
  // BF16: 1, -3, 2⁻¹³³ (subnormal). F64: 0.1 rounds to the nearest fp32.
  const SafetensorsFile file = parse(test::foreign_safetensors(
      {{"h", "F16", {7}, u16_bytes({0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00, 0x7e00})},
       {"b", "BF16", {3}, u16_bytes({0x3f80, 0xc040, 0x0001})},
       {"d", "F64", {1}, std::string(reinterpret_cast<const char*>(&kTenth), 8)}}));
  const auto& h = file.tensor("h").data;
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_EQ(h[2], 65504.0f);
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[4], 0.0f);
  EXPECT_TRUE(std::signbit(h[4]));
  EXPECT_EQ(h[5], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(h[6]));
  const auto& b = file.tensor("b").data;
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], -3.0f);
  EXPECT_EQ(b[2], std::ldexp(1.0f, -133));
  EXPECT_EQ(file.tensor("d").data[0], 0.1f);
}

TEST(ForeignSafetensors, RefusesOtherDtypesNamingTensorAndDtype) {
  try {
    parse(test::foreign_safetensors({{"step", "I64", {1}, std::string(8, '\0')}}));
    ADD_FAILURE() << "read an I64 tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_THAT(e.what(), HasSubstr("tensor 'step' of dtype I64"));
  }
}

}  // namespace
}  // namespace loco::checkpoint
