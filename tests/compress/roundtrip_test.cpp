// Round trips of the element-wise codecs on every standard input, with the error bound each
// format promises and its exact encoded size.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "test_inputs.hpp"

namespace loco::compress {
namespace {

using testing::standard_inputs;

std::vector<float> roundtrip(const Codec& codec, std::span<const float> x,
                             std::size_t expected_size) {
  const auto message = codec.encode(x);
  EXPECT_EQ(message.size(), expected_size) << codec.spec() << " n=" << x.size();
  EXPECT_LE(message.size(), codec.max_encoded_size(x.size()));
  std::vector<float> out(x.size(), 12345.0f);
  codec.decode(message, out);
  return out;
}

std::size_t blocks(std::size_t n, std::size_t block) {
  return (n + block - 1) / block;
}

float block_absmax(std::span<const float> x, std::size_t i, std::size_t block) {
  const std::size_t first = i / block * block;
  float m = 0.0f;
  for (std::size_t j = first; j < std::min(x.size(), first + block); ++j) {
    m = std::max(m, std::fabs(x[j]));
  }
  return m;
}

constexpr float kSlack = 1.0f + 1e-5f;  // float rounding in scale and product

TEST(FloatCodecs, Fp32IsExact) {
  const auto codec = make_codec("fp32");
  for (const auto& input : standard_inputs()) {
    const auto out = roundtrip(*codec, input.values, 12 + 4 * input.values.size());
    EXPECT_EQ(out, input.values) << input.name;
  }
}

TEST(FloatCodecs, HalfFormatsRoundToNearestWithinHalfAnUlp) {
  for (const auto& [spec, rel] : {std::pair{"fp16", 0x1p-11f}, std::pair{"bf16", 0x1p-8f}}) {
    const auto codec = make_codec(spec);
    for (const auto& input : standard_inputs()) {
      const auto out = roundtrip(*codec, input.values, 12 + 2 * input.values.size());
      for (std::size_t i = 0; i < out.size(); ++i) {
        const float x = input.values[i];
        // fp16 subnormals have an absolute spacing of 2^-24.
        const float bound = std::max(rel * std::fabs(x), spec[0] == 'f' ? 0x1p-25f : 0.0f);
        ASSERT_LE(std::fabs(x - out[i]), bound) << spec << " " << input.name << " i=" << i;
      }
    }
  }
}

TEST(FloatCodecs, Fp16VectorAndScalarPathsAgree) {
  // Element 8 goes through the scalar tail, elements 0..7 through F16C (when built with it).
  const std::vector<float> probes = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f,
                                     65504.0f,        0x1p-24f,
                                     0x1p-25f,        0x1.8p-25f,
                                     -0x1p-20f,       3.14159f,
                                     1e-30f,          -2.5e-6f,
                                     6.1e-5f,         65519.0f};
  const auto codec = make_codec("fp16");
  for (float p : probes) {
    std::vector<float> x(9, p);
    const auto m = codec->encode(x);
    EXPECT_EQ(m[12], m[12 + 16]) << p;
    EXPECT_EQ(m[13], m[12 + 17]) << p;
  }
  EXPECT_THROW((void)codec->encode(std::vector<float>{65520.0f}), Error);
}

TEST(BlockCodecs, Int8AbsmaxErrorIsAtMostHalfAScale) {
  for (std::size_t block : {8u, 64u, 256u}) {
    const auto codec = make_codec("int8:block=" + std::to_string(block));
    for (const auto& input : standard_inputs()) {
      const std::size_t n = input.values.size();
      const auto out = roundtrip(*codec, input.values, 12 + 4 + 4 * blocks(n, block) + n);
      for (std::size_t i = 0; i < n; ++i) {
        const float scale = block_absmax(input.values, i, block) / 127.0f;
        ASSERT_LE(std::fabs(input.values[i] - out[i]), scale / 2 * kSlack)
            << input.name << " block=" << block << " i=" << i;
      }
    }
  }
}

TEST(BlockCodecs, Int4AbsmaxErrorIsAtMostHalfAScale) {
  const auto codec = make_codec("int4:block=64");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const auto out = roundtrip(*codec, input.values, 12 + 4 + 4 * blocks(n, 64) + (n + 1) / 2);
    for (std::size_t i = 0; i < n; ++i) {
      const float scale = block_absmax(input.values, i, 64) / 7.0f;
      ASSERT_LE(std::fabs(input.values[i] - out[i]), scale / 2 * kSlack) << input.name << i;
    }
  }
}

// Four levels ±0.5, ±1.5 times scale = absmax / 1.5: the error is at most half a scale (the
// absmax itself is exact).
TEST(BlockCodecs, Int2MidRiseErrorIsAtMostHalfAScale) {
  const auto codec = make_codec("int2:block=64");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const auto out = roundtrip(*codec, input.values, 12 + 4 + 4 * blocks(n, 64) + (n + 3) / 4);
    for (std::size_t i = 0; i < n; ++i) {
      const float scale = block_absmax(input.values, i, 64) / 1.5f;
      ASSERT_LE(std::fabs(input.values[i] - out[i]), scale / 2 * kSlack) << input.name << i;
      if (std::fabs(input.values[i]) == block_absmax(input.values, i, 64)) {
        ASSERT_NEAR(out[i], input.values[i], 1e-6f * scale) << input.name << i;
      }
    }
  }
}

TEST(BlockCodecs, Fp4E3M0ErrorIsAThirdOfTheValueOrAHundredTwentyEighthOfTheScale) {
  const auto codec = make_codec("fp4:block=64");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const auto out = roundtrip(*codec, input.values, 12 + 4 + 4 * blocks(n, 64) + (n + 1) / 2);
    for (std::size_t i = 0; i < n; ++i) {
      const float x = input.values[i];
      const float s = block_absmax(input.values, i, 64);
      ASSERT_LE(std::fabs(x - out[i]), std::max(std::fabs(x) / 3, s / 128) * kSlack)
          << input.name << " i=" << i << " x=" << x << " got " << out[i];
      // Every decoded value is ±0 or ±s·2^-j for j in 0..6.
      if (out[i] != 0.0f) {
        const float level = std::log2(std::fabs(out[i]) / s);
        ASSERT_NEAR(level, std::round(level), 1e-5) << input.name << i;
        ASSERT_GE(std::round(level), -6.0f);
        ASSERT_EQ(std::signbit(out[i]), std::signbit(x));
      }
    }
  }
}

TEST(BlockCodecs, Fp4VectorAndScalarPathsGiveTheSameCodes) {
  // In a 9-value message, values 0..7 take the 8-wide path and value 8 the scalar tail.
  const float probes[] = {1.0f,        0.75f,   0.7499f,    1.0f / 128, 0.0078f, 0.0117f,
                          0.01171875f, -0.375f, -0.0f,      0.2f,       -0.99f,  0.5625f,
                          3.0f / 256,  0.0f,    -1.0f / 64, 0.000001f};
  const auto codec = make_codec("fp4:block=64");
  for (float p : probes) {
    std::vector<float> x(9, p);
    x[1] = 1.0f;  // sets the block's scale
    const auto m = codec->encode(x);
    const auto nibble = [&](std::size_t i) {
      return (std::to_integer<int>(m[20 + i / 2]) >> (4 * (i % 2))) & 15;
    };
    EXPECT_EQ(nibble(0), nibble(8)) << p;
  }
}

TEST(BlockCodecs, SignKeepsTheSignAndTheBlockMeanMagnitude) {
  const auto codec = make_codec("sign:block=64");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const auto out = roundtrip(*codec, input.values, 12 + 4 + 4 * blocks(n, 64) + (n + 7) / 8);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t first = i / 64 * 64;
      const std::size_t last = std::min(n, first + 64);
      double mean = 0.0;
      for (std::size_t j = first; j < last; ++j) mean += std::fabs(input.values[j]);
      mean /= static_cast<double>(last - first);
      ASSERT_NEAR(std::fabs(out[i]), mean, 1e-6 * mean) << input.name << i;
      if (input.values[i] != 0.0f) {
        ASSERT_EQ(out[i] < 0, input.values[i] < 0) << input.name << i;
      }
    }
  }
}

TEST(BlockCodecs, StochasticRoundingIsSeededUnbiasedAndWithinOneStep) {
  const auto x = testing::gaussian(4096, 7);
  for (const char* spec : {"int8:block=64,round=stochastic", "int4:block=64,round=stochastic",
                           "fp4:block=64,round=stochastic"}) {
    const auto codec = make_codec(spec);
    EXPECT_EQ(codec->encode(x, {.seed = 5}), codec->encode(x, {.seed = 5})) << spec;
    EXPECT_NE(codec->encode(x, {.seed = 5}), codec->encode(x, {.seed = 6})) << spec;
    // The mean of the decoded values over many seeds approaches x (rounding is unbiased).
    std::vector<double> mean(x.size(), 0.0);
    std::vector<float> out(x.size());
    constexpr int kSeeds = 200;
    for (int seed = 0; seed < kSeeds; ++seed) {
      codec->decode(codec->encode(x, {.seed = static_cast<std::uint64_t>(seed)}), out);
      for (std::size_t i = 0; i < x.size(); ++i) mean[i] += out[i] / double{kSeeds};
    }
    double bias = 0.0;
    double err_nearest = 0.0;
    const std::string name(spec, std::string_view(spec).find(':'));
    const auto nearest = make_codec(name + ":block=64");
    nearest->decode(nearest->encode(x), out);
    for (std::size_t i = 0; i < x.size(); ++i) {
      bias += std::fabs(mean[i] - x[i]);
      err_nearest += std::fabs(out[i] - x[i]);
    }
    // Averaging 200 draws shrinks the error well below round-to-nearest's (by ~sqrt(200)).
    EXPECT_LT(bias, err_nearest / 4) << spec;
  }
}

TEST(Uint8Codebook, InteriorBucketsAreWithinOneBucketWidthAndSizesAreExact) {
  const auto codec = make_codec("uint8:k=3");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const auto out = roundtrip(*codec, input.values, 12 + 4 + 1024 + n);
    if (n == 0) continue;
    double sum = 0, sum_sq = 0;
    for (float v : input.values) sum += v, sum_sq += double{v} * v;
    const double mean = n ? sum / double(n) : 0.0;
    const double sigma = n ? std::sqrt(std::max(0.0, sum_sq / double(n) - mean * mean)) : 0.0;
    const double width = 6.0 * sigma / 256;
    const float lo = *std::min_element(input.values.begin(), input.values.end());
    const float hi = *std::max_element(input.values.begin(), input.values.end());
    for (std::size_t i = 0; i < n; ++i) {
      const double x = input.values[i];
      ASSERT_GE(out[i], lo) << input.name;  // a bucket mean lies within the data
      ASSERT_LE(out[i], hi) << input.name;
      if (std::fabs(x - mean) <= 3 * sigma - width) {
        ASSERT_LE(std::fabs(x - out[i]), width * 1.001) << input.name << " i=" << i;
      }
    }
    if (sigma == 0.0) {
      EXPECT_EQ(out, input.values) << input.name;  // constant: exact
    }
  }
}

TEST(BlockCodecs, DenormalBlocksEncodeAsZeros) {
  // 1/absmax overflows for these blocks: they are sent as zeros (an error below 2^-126).
  const std::vector<float> x = {1e-45f, -3e-45f, 0.0f, 2e-39f, 0.0f, 0.0f, 0.0f, 1e-40f};
  for (const char* spec :
       {"int8:block=8", "int4:block=8", "int2:block=8", "fp4:block=8", "uint8", "sign:block=8",
        "int8:block=8,round=stochastic", "fp4:block=8,round=stochastic"}) {
    const auto codec = make_codec(spec);
    std::vector<float> out(x.size());
    codec->decode(codec->encode(x), out);
    for (std::size_t i = 0; i < x.size(); ++i) {
      EXPECT_LE(std::fabs(out[i] - x[i]), 0x1p-126f) << spec << " " << i;
    }
  }
}

TEST(Topk, KeepsTheLargestMagnitudesWithTiesToTheLowerIndex) {
  const auto codec = make_codec("topk:fraction=0.1,values=fp32");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    const std::size_t k = n == 0 ? 0 : std::max<std::size_t>(1, std::llround(0.1 * double(n)));
    const auto out = roundtrip(*codec, input.values, 12 + 8 + 4 * k + 12 + 4 * k);
    // Reference: sort indices by (|x| desc, index asc) and keep the first k.
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::fabs(input.values[a]) > std::fabs(input.values[b]);
    });
    std::vector<bool> kept(n, false);
    for (std::size_t j = 0; j < k; ++j) kept[order[j]] = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (kept[i]) {
        ASSERT_EQ(out[i], input.values[i]) << input.name << i;
      } else {
        ASSERT_EQ(out[i], 0.0f) << input.name << i;
        ASSERT_TRUE(std::signbit(out[i])) << "unsent positions decode to -0.0";
      }
    }
  }
}

// Chunks of 10 (the last of n % 10), k = 3 per chunk: the reference sorts each chunk by
// (|x| desc, index asc).
TEST(ChunkTopk, KeepsEachChunksLargestMagnitudesWithTiesToTheLowerIndex) {
  const auto codec = make_codec("chunktopk:chunk=10,topk=3,values=fp32");
  for (const auto& input : standard_inputs()) {
    const std::size_t n = input.values.size();
    std::vector<bool> kept(n, false);
    std::size_t k_total = 0;
    for (std::size_t c0 = 0; c0 < n; c0 += 10) {
      std::vector<std::size_t> order;
      for (std::size_t i = c0; i < std::min(n, c0 + 10); ++i) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::fabs(input.values[a]) > std::fabs(input.values[b]);
      });
      for (std::size_t j = 0; j < std::min<std::size_t>(3, order.size()); ++j, ++k_total)
        kept[order[j]] = true;
    }
    const auto out = roundtrip(*codec, input.values, 12 + 8 + 2 * k_total + 12 + 4 * k_total);
    for (std::size_t i = 0; i < n; ++i) {
      if (kept[i]) {
        ASSERT_EQ(out[i], input.values[i]) << input.name << i;
      } else {
        ASSERT_EQ(out[i], 0.0f) << input.name << i;
        ASSERT_TRUE(std::signbit(out[i])) << "unsent positions decode to -0.0";
      }
    }
  }
}

TEST(Codecs, RejectNonFiniteInputAndWrongShapes) {
  for (const char* spec : {"fp32", "fp16", "bf16", "int8", "int4", "int2", "fp4", "sign", "uint8",
                           "topk:fraction=0.5", "chunktopk:chunk=8,topk=2"}) {
    const auto codec = make_codec(spec);
    for (float bad : {NAN, INFINITY, -INFINITY}) {
      std::vector<float> x(100, 1.0f);
      x[37] = bad;
      EXPECT_THROW((void)codec->encode(x), Error) << spec << " " << bad;
    }
    const std::size_t shape[] = {3, 4};
    EXPECT_THROW((void)codec->encode(std::vector<float>(11), {.shape = shape}), Error) << spec;
    EXPECT_NO_THROW((void)codec->encode(std::vector<float>(12), {.shape = shape})) << spec;
  }
}

}  // namespace
}  // namespace loco::compress
