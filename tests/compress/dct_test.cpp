// The chunked DCT and the DeMo codec built on it.

#include "loco/compress/dct.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "loco/compress/codec.hpp"
#include "test_inputs.hpp"

namespace loco::compress {
namespace {

TEST(Dct, ChunkSizeIsTheLargestDivisorAtMostTheTarget) {
  EXPECT_EQ(chunk_size(768, 64), 64u);
  EXPECT_EQ(chunk_size(100, 64), 50u);
  EXPECT_EQ(chunk_size(96, 64), 48u);
  EXPECT_EQ(chunk_size(50257, 64), 29u);  // 50257 = 29 · 1733
  EXPECT_EQ(chunk_size(97, 64), 1u);      // a prime above the target
  EXPECT_EQ(chunk_size(5, 64), 5u);
  EXPECT_EQ(chunk_size(1, 64), 1u);
}

TEST(Dct, MatrixIsOrthonormalAndMatchesTheDefinition) {
  for (std::size_t n : {1u, 2u, 7u, 64u}) {
    const RowMatrixXf d = dct_matrix(n);
    const RowMatrixXf identity = RowMatrixXf::Identity(n, n);
    EXPECT_LT((d * d.transpose() - identity).cwiseAbs().maxCoeff(), 1e-5f) << n;
    // C[k] = s_k Σ_j x[j] cos(π (2j+1) k / 2n) on a random vector, in double.
    const auto x = testing::gaussian(n, n);
    for (std::size_t k = 0; k < n; ++k) {
      double expected = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        expected += x[j] * std::cos(std::numbers::pi * double(2 * j + 1) * double(k) / (2.0 * n));
      }
      expected *= std::sqrt((k == 0 ? 1.0 : 2.0) / double(n));
      double got = 0.0;
      for (std::size_t j = 0; j < n; ++j) got += double(d(k, j)) * x[j];
      EXPECT_NEAR(got, expected, 1e-5) << n << " " << k;
    }
  }
}

TEST(Dct, ChunkedForwardMatchesTheDefinitionPerChunk) {
  // C[a][b] = s_a s_b Σ_ij X[i][j] cos(π(2i+1)a / 2cr) cos(π(2j+1)b / 2cc), chunk by chunk.
  constexpr std::size_t kRows = 6, kCols = 10, kCr = 3, kCc = 5;
  const ChunkedDct dct(kRows, kCols, kCr, kCc);
  const auto x = testing::gaussian(kRows * kCols, 17);
  std::vector<float> c(x.size());
  dct.forward(x, c);
  const auto basis = [](std::size_t n, std::size_t k, std::size_t j) {
    return std::sqrt((k == 0 ? 1.0 : 2.0) / double(n)) *
           std::cos(std::numbers::pi * double(2 * j + 1) * double(k) / (2.0 * double(n)));
  };
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t col = 0; col < kCols; ++col) {
      const std::size_t r0 = r / kCr * kCr, c0 = col / kCc * kCc;
      double expected = 0.0;
      for (std::size_t i = 0; i < kCr; ++i) {
        for (std::size_t j = 0; j < kCc; ++j) {
          expected +=
              x[(r0 + i) * kCols + c0 + j] * basis(kCr, r - r0, i) * basis(kCc, col - c0, j);
        }
      }
      EXPECT_NEAR(c[r * kCols + col], expected, 1e-5) << r << "," << col;
    }
  }
}

TEST(Dct, InverseOfForwardIsIdentityAndEnergyIsKept) {
  struct Case {
    std::size_t rows, cols, cr, cc;
  };
  for (const Case c : {Case{1, 100, 1, 50}, Case{64, 128, 64, 64}, Case{30, 12, 15, 4}}) {
    const ChunkedDct dct(c.rows, c.cols, c.cr, c.cc);
    const auto x = testing::gaussian(c.rows * c.cols, 11);
    std::vector<float> coefficients(x.size()), back(x.size());
    dct.forward(x, coefficients);
    dct.inverse(coefficients, back);
    double energy_x = 0.0, energy_c = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_NEAR(back[i], x[i], 1e-5f) << c.rows << "x" << c.cols << " i=" << i;
      energy_x += double(x[i]) * x[i];
      energy_c += double(coefficients[i]) * coefficients[i];
    }
    EXPECT_NEAR(energy_c, energy_x, 1e-5 * energy_x);  // Parseval: the transform is orthonormal
  }
}

TEST(Dct, ConstantChunkHasOnlyADcCoefficient) {
  const ChunkedDct dct(8, 16, 8, 8);
  std::vector<float> x(128, 2.0f), c(128);
  dct.forward(x, c);
  for (std::size_t i = 0; i < c.size(); ++i) {
    const bool dc = i == 0 || i == 8;  // (0,0) of the two chunks
    EXPECT_NEAR(c[i], dc ? 2.0f * 8 : 0.0f, 1e-4f) << i;
  }
}

TEST(DemoCodec, KeepsTheLargestCoefficientsOfEachChunk) {
  const std::size_t shape[] = {16, 32};
  const auto x = testing::gaussian(16 * 32, 5);
  const auto codec = make_codec("demo:chunk=8,topk=6,values=fp32");
  const auto message = codec->encode(x, {.shape = shape});
  // 8 chunks of 8×8: header 12 + 20, 8·6 u16 indices, fp32 values message 12 + 48·4.
  EXPECT_EQ(message.size(), 12u + 20 + 2 * 48 + 12 + 4 * 48);

  std::vector<float> decoded(x.size());
  codec->decode(message, decoded);
  const ChunkedDct dct(16, 32, 8, 8);
  std::vector<float> c(x.size()), c_hat(x.size());
  dct.forward(x, c);
  dct.forward(decoded, c_hat);
  for (std::size_t chunk = 0; chunk < 8; ++chunk) {
    std::vector<float> kept_mags, dropped_mags;
    for (std::size_t local = 0; local < 64; ++local) {
      const std::size_t i = (chunk / 4 * 8 + local / 8) * 32 + chunk % 4 * 8 + local % 8;
      const bool kept = std::fabs(c_hat[i]) > 1e-4f;
      (kept ? kept_mags : dropped_mags).push_back(std::fabs(c[i]));
      if (kept) {
        EXPECT_NEAR(c_hat[i], c[i], 1e-4f);
      }
    }
    ASSERT_EQ(kept_mags.size(), 6u) << chunk;
    EXPECT_GE(*std::min_element(kept_mags.begin(), kept_mags.end()),
              *std::max_element(dropped_mags.begin(), dropped_mags.end()))
        << chunk;
  }
}

TEST(DemoCodec, TakesTheShapeFromAnArenaLayout) {
  auto layout =
      std::make_shared<const ArenaLayout>(std::vector<TensorSpec>{{"bias", {96}}, {"w", {16, 24}}});
  Arena arena(layout);
  const auto values = testing::gaussian(16 * 24, 3);
  std::copy(values.begin(), values.end(), arena.tensor(1).begin());
  const auto codec = make_codec("demo:chunk=8,topk=4,values=fp16");
  const std::size_t explicit_shape[] = {16, 24};
  const auto from_layout = codec->encode(arena.tensor(1), {.shape = layout->tensor(1).shape});
  EXPECT_EQ(from_layout, codec->encode(values, {.shape = explicit_shape}));
  // 16×24 gives six 8×8 chunks; a flat view gives forty-eight 1×8 chunks.
  EXPECT_NE(from_layout, codec->encode(values));
}

TEST(DemoCodec, TiesGoToTheLowerIndex) {
  // All coefficients of a zero input tie: each chunk keeps its first k positions.
  const std::size_t shape[] = {8, 16};
  const auto codec = make_codec("demo:chunk=8,topk=3,values=fp32");
  const auto message = codec->encode(std::vector<float>(128, 0.0f), {.shape = shape});
  for (std::size_t j = 0; j < 6; ++j) {
    std::uint16_t index;
    std::memcpy(&index, message.data() + 32 + 2 * j, 2);
    EXPECT_EQ(index, j % 3) << j;
  }
}

TEST(DemoCodec, KeepingEveryCoefficientReconstructsTheInput) {
  for (const auto& input : testing::standard_inputs()) {
    const auto codec = make_codec("demo:chunk=64,topk=16384,values=fp32");
    std::vector<float> out(input.values.size());
    codec->decode(codec->encode(input.values), out);
    for (std::size_t i = 0; i < out.size(); ++i) {
      ASSERT_NEAR(out[i], input.values[i], 1e-4f * (1 + std::fabs(input.values[i])))
          << input.name << i;
    }
  }
}

TEST(DemoCodec, SignValuesCarryOneScalePerChunk) {
  const std::size_t shape[] = {64, 64};
  const auto x = testing::gaussian(64 * 64, 9);
  const auto codec = make_codec("demo:chunk=64,topk=32,values=sign");
  // header 32 | 32 u16 indices | sign message: 12 + 4 (block) + 4 (one scale) + 32 bits.
  EXPECT_EQ(codec->encode(x, {.shape = shape}).size(), 32u + 64 + 12 + 4 + 4 + 4);
}

}  // namespace
}  // namespace loco::compress
