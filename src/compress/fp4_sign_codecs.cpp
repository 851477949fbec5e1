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

class Fp4Codec final : public BlockScaledCodec {
 public:
  Fp4Codec(std::size_t block, bool stochastic)
      : BlockScaledCodec({CodecId::fp4, "fp4", 4}, block, stochastic) {}

 protected:
  float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                     std::uint64_t seed) const override {
    const float amax = absmax(x.data(), x.size(), "fp4");
    auto* out = reinterpret_cast<std::uint8_t*>(codes);
    const float inv = amax == 0.0f ? 0.0f : 1.0f / amax;
    alignas(32) std::uint8_t q[kNibbleSlice + 1];
    for (std::size_t s = 0; s < x.size(); s += kNibbleSlice) {
      const std::size_t len = std::min(kNibbleSlice, x.size() - s);
      const float* xs = x.data() + s;
      if (stochastic()) {
        for (std::size_t i = 0; i < len; ++i) {
          const float r = std::min(std::fabs(xs[i]) * inv, 1.0f);
          const float u =
              to_unit_float(counter_u64(seed, std::uint64_t(CodecId::fp4), first + s + i));
          q[i] =
              static_cast<std::uint8_t>(((bits_of(xs[i]) >> 31) << 3) | fp4_stochastic_code(r, u));
        }
      } else {
        for (std::size_t i = 0; i < len; ++i) {
          const float r = std::min(std::fabs(xs[i]) * inv, 1.0f);
          q[i] = static_cast<std::uint8_t>(((bits_of(xs[i]) >> 31) << 3) | fp4_nearest_code(r));
        }
      }
      pack_nibbles(q, len, out + s / 2);
    }
    return amax;
  }
  void decode_block(const std::byte* codes, std::size_t n, float scale, float* out) const override {
    float levels[16];
    for (int c = 0; c < 16; ++c) {
      const float magnitude = (c & 7) == 0 ? 0.0f : std::ldexp(scale, (c & 7) - 7);
      levels[c] = (c & 8) ? -magnitude : magnitude;
    }
    const auto* packed = reinterpret_cast<const std::uint8_t*>(codes);
    for (std::size_t i = 0; i < n; ++i) out[i] = levels[(packed[i / 2] >> (4 * (i % 2))) & 15];
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
    for (std::size_t i = 0; i < n; ++i) out[i] = (bits[i / 8] >> (i % 8)) & 1 ? -scale : scale;
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
