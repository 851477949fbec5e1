// int8 and int4 blockwise absmax: scale = absmax / L (L = 127 or 7), code = round(x / scale).
// Error bound per value: scale / 2 when rounding to nearest, < scale when stochastic.
// int2, four levels without a zero (mid-rise, for values a top-k chose for their size):
// scale = absmax / 1.5, value = (code − 1.5)·scale for code in 0..3, code = round(x/scale + 1.5).

#include <algorithm>
#include <cmath>
#include <cstring>

#include "block_codec.hpp"
#include "codecs.hpp"
#include "loco/core/rng.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace loco::compress::detail {
namespace {

// q[i] = x[i] * inv rounded (to nearest even, or stochastically from a counter stream keyed by
// the element's index in the message, so the bits do not depend on how the work is split).
void quantize_uniform(std::span<const float> x, float inv, float max_level, bool stochastic,
                      std::uint64_t seed, std::uint64_t first, CodecId id, std::int8_t* q) {
  if (!stochastic) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float v = std::clamp(x[i] * inv, -max_level, max_level);
      q[i] = static_cast<std::int8_t>(static_cast<int>(std::nearbyint(v)));
    }
    return;
  }
  const auto stream = static_cast<std::uint64_t>(id);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float u = to_unit_float(counter_u64(seed, stream, first + i));
    const float v = std::floor(x[i] * inv + u);
    q[i] = static_cast<std::int8_t>(static_cast<int>(std::clamp(v, -max_level, max_level)));
  }
}

class Int8Codec final : public BlockScaledCodec {
 public:
  Int8Codec(std::size_t block, bool stochastic)
      : BlockScaledCodec({CodecId::int8, "int8", 8}, block, stochastic) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                     std::uint64_t seed) const override {
    const float amax = absmax(x.data(), x.size(), "int8");
    auto* q = reinterpret_cast<std::int8_t*>(codes);
    const float inv = 127.0f / amax;
    if (!std::isfinite(inv)) {  // all zero, or so tiny (< 2^-126) that 1/scale overflows
      std::memset(q, 0, x.size());
      return 0.0f;
    }
    quantize_uniform(x, inv, 127.0f, stochastic(), seed, first, CodecId::int8, q);
    return amax / 127.0f;
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    const auto* q = reinterpret_cast<const std::int8_t*>(codes);
    for (std::size_t i = 0; i < n; ++i) out[i] = scale * static_cast<float>(q[i]);
  }
};

class Int4Codec final : public BlockScaledCodec {
 public:
  Int4Codec(std::size_t block, bool stochastic)
      : BlockScaledCodec({CodecId::int4, "int4", 4}, block, stochastic) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                     std::uint64_t seed) const override {
    const float amax = absmax(x.data(), x.size(), "int4");
    if (!std::isfinite(7.0f / amax)) {  // all zero, or too tiny to scale (see int8)
      std::memset(codes, 0, code_bytes(x.size(), 4));
      return 0.0f;
    }
    // Quantize a slice at a time into a small buffer, then pack two's-complement nibbles.
    alignas(32) std::int8_t q[kNibbleSlice + 1];
    for (std::size_t s = 0; s < x.size(); s += kNibbleSlice) {
      const std::size_t len = std::min(kNibbleSlice, x.size() - s);
      quantize_uniform(x.subspan(s, len), 7.0f / amax, 7.0f, stochastic(), seed, first + s,
                       CodecId::int4, q);
      pack_nibbles(reinterpret_cast<std::uint8_t*>(q), len,
                   reinterpret_cast<std::uint8_t*>(codes) + s / 2);
    }
    return amax / 7.0f;
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    const auto* packed = reinterpret_cast<const std::uint8_t*>(codes);
    std::size_t i = 0;
#if defined(__AVX2__)
    // 8 nibbles from 4 bytes: shift each into lane i's low bits, sign-extend, scale (the same
    // single product as the scalar loop, so the bits agree).
    const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    for (; i + 8 <= n; i += 8) {
      std::uint32_t word;
      std::memcpy(&word, packed + i / 2, 4);
      const __m256i nibbles = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(word)), shifts);
      const __m256i q = _mm256_srai_epi32(_mm256_slli_epi32(nibbles, 28), 28);
      _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_set1_ps(scale), _mm256_cvtepi32_ps(q)));
    }
#endif
    for (; i < n; ++i) {
      // Sign-extend the nibble: shift it to the top of an int8, then arithmetic shift back.
      const auto byte = static_cast<std::uint8_t>(packed[i / 2] << (i % 2 ? 0 : 4));
      const int q = static_cast<std::int8_t>(byte) >> 4;
      out[i] = scale * static_cast<float>(q);
    }
  }
};

// Codes 0..3, four to a byte, value i in bits 2(i % 4) of byte i / 4.
class Int2Codec final : public BlockScaledCodec {
 public:
  Int2Codec(std::size_t block, bool stochastic)
      : BlockScaledCodec({CodecId::int2, "int2", 2}, block, stochastic) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                     std::uint64_t seed) const override {
    const float amax = absmax(x.data(), x.size(), "int2");
    auto* packed = reinterpret_cast<std::uint8_t*>(codes);
    std::memset(packed, 0, code_bytes(x.size(), 2));
    const float inv = 1.5f / amax;
    if (!std::isfinite(inv)) return 0.0f;  // all zero, or too tiny to scale (see int8)
    const auto stream = static_cast<std::uint64_t>(CodecId::int2);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float level = x[i] * inv + 1.5f;  // in [0, 3]
      const float rounded =
          stochastic() ? std::floor(level + to_unit_float(counter_u64(seed, stream, first + i)))
                       : std::nearbyint(level);
      const auto code = static_cast<std::uint8_t>(std::clamp(rounded, 0.0f, 3.0f));
      packed[i / 4] = static_cast<std::uint8_t>(packed[i / 4] | code << (2 * (i % 4)));
    }
    return amax / 1.5f;
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    const auto* packed = reinterpret_cast<const std::uint8_t*>(codes);
    for (std::size_t i = 0; i < n; ++i) {
      const int code = (packed[i / 4] >> (2 * (i % 4))) & 3;
      out[i] = scale * (static_cast<float>(code) - 1.5f);
    }
  }
};

}  // namespace

std::unique_ptr<Codec> make_int2(std::size_t block, bool stochastic) {
  return std::make_unique<Int2Codec>(block, stochastic);
}
std::unique_ptr<Codec> make_int8(std::size_t block, bool stochastic) {
  return std::make_unique<Int8Codec>(block, stochastic);
}
std::unique_ptr<Codec> make_int4(std::size_t block, bool stochastic) {
  return std::make_unique<Int4Codec>(block, stochastic);
}

}  // namespace loco::compress::detail
