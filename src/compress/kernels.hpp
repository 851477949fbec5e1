#pragma once
// Loops shared by the codecs (internal header): absolute maximum with a finiteness check, the
// tiled decode-and-accumulate, and the CRTP base that derives decode/decode_accumulate from a
// codec's parse() and decode_range().

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"

namespace loco::compress::detail {

// max |x[i]|. Throws Error(invalid_argument) naming `codec` if any value is NaN or infinite.
// Works on the bit patterns: for non-negative floats the IEEE order is the unsigned integer
// order, NaN and Inf sort above every finite value, and the loop vectorises to vpmaxud.
inline float absmax(const float* x, std::size_t n, const char* codec) {
  std::uint32_t max_bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, x + i, 4);
    max_bits = std::max(max_bits, bits & 0x7fffffffu);
  }
  if (max_bits >= 0x7f800000u) {
    throw Error(ErrorCategory::invalid_argument,
                std::string(codec) + " encode: the input holds a NaN or infinite value");
  }
  float out;
  std::memcpy(&out, &max_bits, 4);
  return out;
}

// Checks that the product of `shape` (if given) is `count`.
void check_shape(std::span<const std::size_t> shape, std::size_t count, const char* codec);

// Calls decode_range(begin, end, tile) over tiles of the output and adds each tile to `sum`.
// The tile holds exactly what decode() would write, so the sum is bit-identical to decoding
// into a buffer first (no fused multiply-add can merge decoding into the addition).
template <typename DecodeRange>
void accumulate_tiles(std::span<float> sum, DecodeRange&& decode_range) {
  constexpr std::size_t kTile = 2048;  // a multiple of 8: tiles start on packed-byte boundaries
  alignas(64) float tile[kTile];
  for (std::size_t begin = 0; begin < sum.size(); begin += kTile) {
    const std::size_t end = std::min(begin + kTile, sum.size());
    decode_range(begin, end, tile);
    float* s = sum.data() + begin;
    for (std::size_t i = 0; i < end - begin; ++i) s[i] += tile[i];
  }
}

// For codecs whose decoder can produce any aligned range of the output: `Derived` provides
//   View parse(std::span<const std::byte> message, std::size_t count) const;   // validates all
//   void decode_range(const View&, std::size_t begin, std::size_t end, float* out) const;
template <typename Derived>
class RangeDecodable : public Codec {
 public:
  void decode(std::span<const std::byte> message, std::span<float> out) const final {
    const auto view = self().parse(message, out.size());
    self().decode_range(view, 0, out.size(), out.data());
  }
  void decode_accumulate(std::span<const std::byte> message, std::span<float> sum) const final {
    const auto view = self().parse(message, sum.size());
    accumulate_tiles(sum, [&](std::size_t begin, std::size_t end, float* tile) {
      self().decode_range(view, begin, end, tile);
    });
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace loco::compress::detail
