// What a reduce step relies on: decode-and-accumulate of several peers' messages equals decoding
// each and summing in a fixed order, bit for bit; the bytes do not depend on the thread count;
// zstd never costs more than its stage header; error feedback carries what was dropped.

#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Core>
#include <cstring>

#include "loco/compress/codec.hpp"
#include "loco/compress/error_feedback.hpp"
#include "test_inputs.hpp"

namespace loco::compress {
namespace {

const char* const kReduceSpecs[] = {
    "fp32",
    "fp16",
    "bf16",
    "int8:block=64",
    "int8:block=64,round=stochastic",
    "uint8:k=3",
    "fp4:block=64",
    "int4:block=64,round=stochastic",
    "sign:block=64",
    "topk:fraction=0.05,values=int8",
    "demo:chunk=16,topk=8,values=sign",
    "demo:chunk=64,topk=32,values=fp16",
    "int8+zstd:level=3",
    "topk:fraction=0.02,values=fp16+zstd:level=1",
};

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
}

TEST(Reduce, AccumulateEqualsDecodeThenSumBitForBit) {
  const std::size_t shape[] = {48, 80};
  constexpr int kPeers = 5;
  for (const char* spec : kReduceSpecs) {
    const auto codec = make_codec(spec);
    std::vector<std::vector<std::byte>> messages;
    for (int p = 0; p < kPeers; ++p) {
      const auto x = p == 3 ? testing::heavy_tailed(48 * 80, 100 + p)
                            : testing::gaussian(48 * 80, 100 + p, 0.01f * float(p + 1));
      messages.push_back(codec->encode(x, {.seed = 9, .shape = shape}));
    }
    std::vector<float> fused(48 * 80, 0.0f), reference(48 * 80, 0.0f), one(48 * 80);
    for (const auto& m : messages) {
      codec->decode_accumulate(m, fused);
      codec->decode(m, one);
      for (std::size_t i = 0; i < one.size(); ++i) reference[i] += one[i];
    }
    EXPECT_TRUE(same_bits(fused, reference)) << spec;
  }
}

TEST(Reduce, BytesDoNotDependOnTheThreadCount) {
  const std::size_t shape[] = {128, 192};
  const auto x = testing::gaussian(128 * 192, 21);
  for (const char* spec : kReduceSpecs) {
    const auto codec = make_codec(spec);
    std::vector<std::vector<std::byte>> bytes;
    std::vector<std::vector<float>> decoded;
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      Eigen::setNbThreads(threads);
      bytes.push_back(codec->encode(x, {.seed = 4, .shape = shape}));
      decoded.emplace_back(x.size());
      codec->decode(bytes.back(), decoded.back());
    }
    EXPECT_EQ(bytes[0], bytes[1]) << spec;
    EXPECT_TRUE(same_bits(decoded[0], decoded[1])) << spec;
  }
}

TEST(Reduce, ZstdNeverCostsMoreThanItsHeaderAndPaysOnSparseData) {
  for (const char* inner : {"int8", "fp32", "topk:fraction=0.01,values=fp32"}) {
    const auto plain = make_codec(inner);
    const auto packed = make_codec(std::string(inner) + "+zstd:level=3");
    for (const auto& input : testing::standard_inputs()) {
      const auto a = plain->encode(input.values);
      const auto b = packed->encode(input.values);
      EXPECT_LE(b.size(), a.size() + 21) << inner << " " << input.name;
      std::vector<float> out_a(input.values.size()), out_b(input.values.size());
      plain->decode(a, out_a);
      packed->decode(b, out_b);
      EXPECT_TRUE(same_bits(out_a, out_b)) << inner << " " << input.name;
    }
  }
  // Random signs do not compress: stored raw. All-zero int8 codes do.
  const auto x = testing::gaussian(32768, 1);
  EXPECT_EQ(make_codec("sign:block=4096+zstd")->encode(x)[12], std::byte{0});
  const auto zeros = std::vector<float>(4096, 0.0f);
  EXPECT_LT(make_codec("int8+zstd")->encode(zeros).size(),
            make_codec("int8")->encode(zeros).size() / 10);
}

TEST(ErrorFeedback, CarriesWhatTheCodecDroppedIntoTheNextRound) {
  const auto codec = make_codec("sign:block=64");
  constexpr std::size_t kN = 1024;
  ErrorFeedback feedback(kN);
  std::vector<double> sent(kN, 0.0), truth(kN, 0.0);
  std::vector<float> decoded(kN);
  for (int round = 0; round < 20; ++round) {
    const auto x = testing::gaussian(kN, 50 + round);
    codec->decode(feedback.encode(*codec, x), decoded);
    for (std::size_t i = 0; i < kN; ++i) {
      sent[i] += decoded[i];
      truth[i] += x[i];
    }
  }
  // Telescoping: Σ decoded = Σ inputs − final residual (up to float rounding per round).
  for (std::size_t i = 0; i < kN; ++i) {
    ASSERT_NEAR(sent[i], truth[i] - feedback.residual()[i], 1e-4) << i;
  }
  feedback.reset();
  for (float r : feedback.residual()) ASSERT_EQ(r, 0.0f);
}

}  // namespace
}  // namespace loco::compress
