// fp4 E3M0 and sign: the two formats whose values are a magnitude level times the block scale.
//
// fp4 (Streaming DiLoCo): a nibble = sign (bit 3) | exponent e (bits 0-2); with s = absmax of
// the block, e = 0 decodes to ±0 and e = 1..7 to ±s·2^(e-7). Rounding to nearest (in linear
// terms) gives |x - x̂| ≤ max(|x| / 3, s / 128).
// sign: one bit per value (1 = negative), scale = mean |x| of the block, x̂ = ±scale.

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

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// The nearest level's exponent code for r = |x| / s in [0, 1]: floor(log2(r · 4/3)) + 7, read
// from the float's exponent field and clamped to [0, 7] (0 when r < 2^-7, i.e. rounds to zero).
// The lowest level's rounding threshold is s/128 (halfway to zero), not 0.75·s/64.
std::uint8_t fp4_nearest_code(float r) {
  const int e = static_cast<int>(bits_of(r * (4.0f / 3.0f)) >> 23) - 127 + 7;
  return static_cast<std::uint8_t>(e >= 1 ? std::min(e, 7) : (r >= 1.0f / 128 ? 1 : 0));
}

// Stochastic: between the levels lo ≤ r < hi, pick hi with probability (r - lo) / (hi - lo).
std::uint8_t fp4_stochastic_code(float r, float u) {
  const int floor_code = std::clamp(static_cast<int>(bits_of(r) >> 23) - 127 + 7, 0, 7);
  if (floor_code == 7) return 7;  // r == 1 exactly: the top level
  const float lo = floor_code == 0 ? 0.0f : std::ldexp(1.0f, floor_code - 7);
  const float hi = std::ldexp(1.0f, floor_code + 1 - 7);
  return static_cast<std::uint8_t>(floor_code + (u * (hi - lo) < r - lo ? 1 : 0));
}

// Nearest-rounded fp4 codes of x[0..n) packed into bytes (n even except at the message end).
// The AVX2 path computes the same bits as fp4_nearest_code, 8 values per 4 bytes.
void fp4_encode_nearest(const float* x, std::size_t n, float inv, std::uint8_t* out) {
  std::size_t i = 0;
#if defined(__AVX2__)
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 r = _mm256_min_ps(_mm256_mul_ps(_mm256_and_ps(v, abs_mask), _mm256_set1_ps(inv)),
                                   _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_sub_epi32(
        _mm256_srli_epi32(_mm256_castps_si256(_mm256_mul_ps(r, _mm256_set1_ps(4.0f / 3.0f))), 23),
        _mm256_set1_epi32(120));
    // Below the first level, round up to it from s/128 on (see fp4_nearest_code).
    const __m256i low = _mm256_and_si256(
        _mm256_castps_si256(_mm256_cmp_ps(r, _mm256_set1_ps(1.0f / 128), _CMP_GE_OQ)),
        _mm256_set1_epi32(1));
    const __m256i magnitude = _mm256_max_epi32(_mm256_min_epi32(e, _mm256_set1_epi32(7)), low);
    const __m256i sign = _mm256_slli_epi32(_mm256_srli_epi32(_mm256_castps_si256(v), 31), 3);
    const __m256i nibbles = _mm256_sllv_epi32(_mm256_or_si256(magnitude, sign), shifts);
    __m128i word =
        _mm_or_si128(_mm256_castsi256_si128(nibbles), _mm256_extracti128_si256(nibbles, 1));
    word = _mm_or_si128(word, _mm_shuffle_epi32(word, 0x4e));
    word = _mm_or_si128(word, _mm_shuffle_epi32(word, 0xb1));
    const auto packed = static_cast<std::uint32_t>(_mm_cvtsi128_si32(word));
    std::memcpy(out + i / 2, &packed, 4);
  }
#endif
  alignas(32) std::uint8_t q[kNibbleSlice + 1];
  for (; i < n; i += kNibbleSlice) {
    const std::size_t len = std::min(kNibbleSlice, n - i);
    for (std::size_t j = 0; j < len; ++j) {
      const float r = std::min(std::fabs(x[i + j]) * inv, 1.0f);
      q[j] = static_cast<std::uint8_t>(((bits_of(x[i + j]) >> 31) << 3) | fp4_nearest_code(r));
    }
    pack_nibbles(q, len, out + i / 2);
  }
}

// out[i] = levels[code i]; `levels` holds the 16 decoded values of one block's scale.
void fp4_decode(const std::uint8_t* packed, std::size_t n, const float* levels, float* out) {
  std::size_t i = 0;
#if defined(__AVX2__)
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256 magnitudes = _mm256_loadu_ps(levels);  // codes 0..7 (positive)
  for (; i + 8 <= n; i += 8) {
    std::uint32_t word;
    std::memcpy(&word, packed + i / 2, 4);
    const __m256i codes =
        _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(word)), shifts),
                         _mm256_set1_epi32(15));
    const __m256 magnitude = _mm256_permutevar8x32_ps(magnitudes, codes);  // low 3 bits
    const __m256i sign = _mm256_slli_epi32(_mm256_srli_epi32(codes, 3), 31);
    _mm256_storeu_ps(out + i, _mm256_xor_ps(magnitude, _mm256_castsi256_ps(sign)));
  }
#endif
  for (; i < n; ++i) out[i] = levels[(packed[i / 2] >> (4 * (i % 2))) & 15];
}

class Fp4Codec final : public BlockScaledCodec {
 public:
  Fp4Codec(std::size_t block, bool stochastic)
      : BlockScaledCodec({CodecId::fp4, "fp4", 4}, block, stochastic) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                     std::uint64_t seed) const override {
    const float amax = absmax(x.data(), x.size(), "fp4");
    auto* out = reinterpret_cast<std::uint8_t*>(codes);
    // All-zero (or denormal-tiny, where 1/amax overflows) blocks encode as zeros.
    const float inv = std::isfinite(1.0f / amax) ? 1.0f / amax : 0.0f;
    if (!stochastic()) {
      fp4_encode_nearest(x.data(), x.size(), inv, out);
      return amax;
    }
    alignas(32) std::uint8_t q[kNibbleSlice + 1];
    for (std::size_t s = 0; s < x.size(); s += kNibbleSlice) {
      const std::size_t len = std::min(kNibbleSlice, x.size() - s);
      for (std::size_t i = 0; i < len; ++i) {
        const float r = std::min(std::fabs(x[s + i]) * inv, 1.0f);
        const float u =
            to_unit_float(counter_u64(seed, std::uint64_t(CodecId::fp4), first + s + i));
        q[i] =
            static_cast<std::uint8_t>(((bits_of(x[s + i]) >> 31) << 3) | fp4_stochastic_code(r, u));
      }
      pack_nibbles(q, len, out + s / 2);
    }
    return amax;
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    constexpr float kLevel[8] = {0.0f, 0x1p-6f, 0x1p-5f, 0x1p-4f, 0x1p-3f, 0x1p-2f, 0x1p-1f, 1.0f};
    float levels[16];
    for (int c = 0; c < 16; ++c) {
      const float magnitude = scale * kLevel[c & 7];  // exact: a power-of-two multiple
      levels[c] = (c & 8) ? -magnitude : magnitude;
    }
    fp4_decode(reinterpret_cast<const std::uint8_t*>(codes), n, levels, out);
  }
};

class SignCodec final : public BlockScaledCodec {
 public:
  explicit SignCodec(std::size_t block)
      : BlockScaledCodec({CodecId::sign, "sign", 1}, block, false) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t,
                     std::uint64_t) const override {
    (void)absmax(x.data(), x.size(), "sign");  // rejects NaN and infinities
    double sum = 0.0;
    for (float v : x) sum += std::fabs(v);
    auto* out = reinterpret_cast<std::uint8_t*>(codes);
    std::memset(out, 0, code_bytes(x.size(), 1));
    for (std::size_t i = 0; i < x.size(); ++i) {
      out[i / 8] |= static_cast<std::uint8_t>((x[i] < 0.0f ? 1u : 0u) << (i % 8));
    }
    return static_cast<float>(sum / static_cast<double>(x.size()));
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    const auto* bits = reinterpret_cast<const std::uint8_t*>(codes);
    std::size_t i = 0;
#if defined(__AVX2__)
    const __m256i lane_bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    for (; i + 8 <= n; i += 8) {
      const __m256i set = _mm256_and_si256(_mm256_set1_epi32(bits[i / 8]), lane_bit);
      const __m256 negative = _mm256_castsi256_ps(_mm256_cmpeq_epi32(set, lane_bit));
      _mm256_storeu_ps(out + i,
                       _mm256_blendv_ps(_mm256_set1_ps(scale), _mm256_set1_ps(-scale), negative));
    }
#endif
    for (; i < n; ++i) out[i] = (bits[i / 8] >> (i % 8)) & 1 ? -scale : scale;
  }
};

}  // namespace

std::unique_ptr<Codec> make_fp4(std::size_t block, bool stochastic) {
  return std::make_unique<Fp4Codec>(block, stochastic);
}
std::unique_ptr<Codec> make_sign(std::size_t block) {
  return std::make_unique<SignCodec>(block);
}

}  // namespace loco::compress::detail
