// Malformed messages are rejected with Error(format) before anything is written: truncated,
// trailing bytes, wrong magic/id/version, a count the receiver does not expect, huge declared
// lengths, bad block sizes, out-of-range indices, non-finite scales.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "test_inputs.hpp"

namespace loco::compress {
namespace {

using Bytes = std::vector<std::byte>;

const char* const kMalformedSpecs[] = {
    "fp32",
    "fp16",
    "bf16",
    "int8:block=64",
    "int4:block=32",
    "int2:block=16",
    "fp4:block=64",
    "sign:block=64",
    "uint8",
    "topk:fraction=0.1,values=int8",
    "chunktopk:chunk=16,topk=4,values=int2",
    "int8+zstd",
    "topk:fraction=0.1+zstd:level=1",
};

// Decoding `message` for `count` values fails with a format error and leaves `sum` untouched.
void expect_rejected(const Codec& codec, const Bytes& message, std::size_t count,
                     const std::string& what) {
  std::vector<float> out(count, 7.0f);
  try {
    codec.decode(message, out);
    ADD_FAILURE() << codec.spec() << ": accepted " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format) << codec.spec() << " " << what << e.what();
  }
  try {
    codec.decode_accumulate(message, out);
    ADD_FAILURE() << codec.spec() << ": accumulate accepted " << what;
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format) << codec.spec() << " " << what << e.what();
  }
  for (float v : out) ASSERT_EQ(v, 7.0f) << codec.spec() << ": wrote before rejecting " << what;
}

void put_u64(Bytes& m, std::size_t at, std::uint64_t v) {
  std::memcpy(m.data() + at, &v, 8);
}
void put_u32(Bytes& m, std::size_t at, std::uint32_t v) {
  std::memcpy(m.data() + at, &v, 4);
}

TEST(Malformed, EveryTruncationAndHeaderFieldIsChecked) {
  const auto x = testing::gaussian(100, 3);
  for (const char* spec : kMalformedSpecs) {
    const auto codec = make_codec(spec);
    const Bytes good = codec->encode(x);
    for (std::size_t len = 0; len < good.size(); ++len) {
      expect_rejected(*codec, Bytes(good.begin(), good.begin() + len), x.size(),
                      "truncation to " + std::to_string(len));
    }
    Bytes longer = good;
    longer.push_back(std::byte{0});
    expect_rejected(*codec, longer, x.size(), "a trailing byte");
    for (std::size_t at : {0u, 1u, 2u, 3u}) {
      Bytes bad = good;
      bad[at] ^= std::byte{0x40};
      expect_rejected(*codec, bad, x.size(), "header byte " + std::to_string(at) + " changed");
    }
    expect_rejected(*codec, good, x.size() + 1, "a count the receiver does not expect");
    Bytes huge = good;
    put_u64(huge, 4, std::uint64_t{1} << 62);
    expect_rejected(*codec, huge, x.size(), "a huge count");
  }
}

TEST(Malformed, BlockSizesAndScalesAreChecked) {
  const auto x = testing::gaussian(100, 3);
  const auto codec = make_codec("int8:block=64");
  const Bytes good = codec->encode(x);
  for (std::uint32_t block : {0u, 7u, 12u, 1u << 25, 0xffffffffu}) {
    Bytes bad = good;
    put_u32(bad, 12, block);
    expect_rejected(*codec, bad, x.size(), "block " + std::to_string(block));
  }
  for (float scale : {NAN, INFINITY, -1.0f}) {
    Bytes bad = good;
    std::memcpy(bad.data() + 16, &scale, 4);
    expect_rejected(*codec, bad, x.size(), "scale " + std::to_string(scale));
  }
  const auto u8 = make_codec("uint8");
  Bytes bad = u8->encode(x);
  const float nan = NAN;
  std::memcpy(bad.data() + 16 + 4 * 200, &nan, 4);
  expect_rejected(*u8, bad, x.size(), "a NaN in the codebook");
}

TEST(Malformed, FloatPayloadsMustBeFinite) {
  const auto x = testing::gaussian(100, 3);
  const std::pair<const char*, std::vector<std::uint8_t>> cases[] = {
      {"fp32", {0x00, 0x00, 0x80, 0x7f}},  // +inf
      {"fp32", {0x01, 0x00, 0xc0, 0xff}},  // NaN
      {"fp16", {0x00, 0x7c}},              // +inf
      {"bf16", {0xc1, 0x7f}},              // NaN
  };
  for (const auto& [spec, value] : cases) {
    const auto codec = make_codec(spec);
    Bytes bad = codec->encode(x);
    for (std::size_t b = 0; b < value.size(); ++b) {
      bad[12 + 37 * value.size() + b] = std::byte{value[b]};
    }
    expect_rejected(*codec, bad, x.size(), std::string("a non-finite ") + spec + " value");
  }
}

TEST(Malformed, TopkCountsAndIndicesAreChecked) {
  const auto x = testing::gaussian(100, 3);
  const auto codec = make_codec("topk:fraction=0.1,values=fp32");
  const Bytes good = codec->encode(x);
  // Layout: header (12) | k (8) | 10 gaps (4 each) | values message.
  for (std::uint64_t k : {std::uint64_t{11}, std::uint64_t{101}, std::uint64_t{1} << 40}) {
    Bytes bad = good;
    put_u64(bad, 12, k);
    expect_rejected(*codec, bad, x.size(), "k=" + std::to_string(k));
  }
  Bytes repeated = good;
  put_u32(repeated, 20 + 4 * 3, 0);
  expect_rejected(*codec, repeated, x.size(), "a repeated index");
  Bytes beyond = good;
  put_u32(beyond, 20 + 4 * 9, 100);
  expect_rejected(*codec, beyond, x.size(), "an index past the end");
  Bytes wrapping = good;
  put_u32(wrapping, 20 + 4 * 5, 0xffffffffu);
  expect_rejected(*codec, wrapping, x.size(), "an index gap of 2^32 - 1");
}

TEST(Malformed, DemoGridAndIndicesAreChecked) {
  const std::size_t shape[] = {16, 24};
  const auto x = testing::gaussian(16 * 24, 3);
  const auto codec = make_codec("demo:chunk=8,topk=4,values=fp32");
  const Bytes good = codec->encode(x, {.shape = shape});
  // Layout: header (12) | cols u64 (12) | chunk rows u32 (20) | chunk cols (24) | k (28) |
  // 6 chunks · 4 u16 indices (32) | values message.
  const std::pair<std::size_t, std::uint64_t> bad_fields[] = {
      {12, 0}, {12, 7}, {12, 1u << 20}, {20, 0}, {20, 3}, {20, 256}, {24, 5}, {28, 0}, {28, 65}};
  for (const auto& [at, value] : bad_fields) {
    Bytes bad = good;
    if (at == 12) {
      put_u64(bad, at, value);
    } else {
      put_u32(bad, at, static_cast<std::uint32_t>(value));
    }
    expect_rejected(*codec, bad, x.size(),
                    "field at " + std::to_string(at) + " = " + std::to_string(value));
  }
  for (const std::uint16_t index : {std::uint16_t{64}, std::uint16_t{0xffff}}) {
    Bytes bad = good;
    std::memcpy(bad.data() + 32 + 2 * 3, &index, 2);
    expect_rejected(*codec, bad, x.size(), "index " + std::to_string(index));
  }
  Bytes unordered = good;
  std::swap(unordered[32], unordered[34]);
  std::swap(unordered[33], unordered[35]);
  expect_rejected(*codec, unordered, x.size(), "indices out of order");
}

TEST(Malformed, ChunkTopkChunkKAndIndicesAreChecked) {
  const auto x = testing::gaussian(100, 3);
  const auto codec = make_codec("chunktopk:chunk=16,topk=4,values=fp32");
  const Bytes good = codec->encode(x);
  // Layout: header (12) | chunk u32 (12) | k u32 (16) | 7 chunks · 4 u16 indices (20) | values.
  const std::pair<std::size_t, std::uint32_t> bad_fields[] = {
      {12, 0}, {12, 8}, {12, 65537}, {12, 1u << 31}, {16, 0}, {16, 5}, {16, 17}, {16, 1u << 30}};
  for (const auto& [at, value] : bad_fields) {
    Bytes bad = good;
    put_u32(bad, at, value);
    expect_rejected(*codec, bad, x.size(),
                    "field at " + std::to_string(at) + " = " + std::to_string(value));
  }
  for (const std::uint16_t index : {std::uint16_t{16}, std::uint16_t{0xffff}}) {
    Bytes bad = good;
    std::memcpy(bad.data() + 20 + 2 * 3, &index, 2);
    expect_rejected(*codec, bad, x.size(), "index " + std::to_string(index));
  }
  Bytes past_the_end = good;  // the last chunk holds 100 − 96 = 4 values
  const std::uint16_t four = 4;
  std::memcpy(past_the_end.data() + 20 + 2 * 27, &four, 2);
  expect_rejected(*codec, past_the_end, x.size(), "an index past the short last chunk");
  Bytes unordered = good;
  std::swap(unordered[20], unordered[22]);
  std::swap(unordered[21], unordered[23]);
  expect_rejected(*codec, unordered, x.size(), "indices out of order");
}

TEST(Malformed, ZstdDeclaredSizesAreBoundedByTheExpectedCount) {
  const auto x = std::vector<float>(1000, 0.5f);  // compresses well: mode 1
  const auto codec = make_codec("int8+zstd");
  const Bytes good = codec->encode(x);
  ASSERT_EQ(good[12], std::byte{1});
  Bytes huge = good;
  put_u64(huge, 13, std::uint64_t{1} << 62);
  expect_rejected(*codec, huge, x.size(), "a 2^62-byte inner message");
  Bytes mode = good;
  mode[12] = std::byte{9};
  expect_rejected(*codec, mode, x.size(), "an unknown mode");
  Bytes frame = good;
  frame[frame.size() - 3] ^= std::byte{0xff};
  expect_rejected(*codec, frame, x.size(), "a corrupt zstd frame");
}

}  // namespace
}  // namespace loco::compress
