#pragma once
// The shared shape of the blockwise-scaled formats (int8, int4, fp4, sign), internal header:
//
//   header | block (u32) | scales: fp32[ceil(n / block)] | codes: ceil(n * bits / 8) bytes
//
// Codes are packed LSB-first in element order. The block is a multiple of 8, so every block's
// codes start on a byte boundary. A subclass only maps one block to codes and back.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "codecs.hpp"
#include "kernels.hpp"
#include "loco/compress/codec.hpp"

namespace loco::compress::detail {

struct BlockFormat {
  CodecId id;
  const char* name;
  unsigned bits;  // per value: 8, 4 or 1
};

struct BlockView {
  std::size_t count = 0;
  std::size_t block = 0;
  const std::byte* scales = nullptr;
  const std::byte* codes = nullptr;
};

class BlockScaledCodec : public RangeDecodable<BlockScaledCodec> {
 public:
  BlockScaledCodec(BlockFormat format, std::size_t block, bool stochastic);

  std::string spec() const override;
  std::size_t max_encoded_size(std::size_t count) const override;  // exact
  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override;

  BlockView parse(std::span<const std::byte> message, std::size_t count) const;
  void decode_range(const BlockView& view, std::size_t begin, std::size_t end, float* out) const;

 protected:
  // Writes the codes of x (values first .. first + x.size() of the message) and returns the
  // block's scale. `seed` drives stochastic rounding where the subclass supports it.
  virtual float encode_block(std::span<const float> x, std::byte* codes, std::uint64_t first,
                             std::uint64_t seed) const = 0;
  // Decodes n values (n a multiple of 8 except at the end of the message) from byte-aligned codes.
  virtual void decode_block(const std::byte* codes, std::size_t n, float scale,
                            float* out) const = 0;

  bool stochastic() const { return stochastic_; }

 private:
  BlockFormat format_;
  std::size_t block_;
  bool stochastic_;
};

// Packed code bytes for n values of `bits` bits.
constexpr std::size_t code_bytes(std::size_t n, unsigned bits) {
  return (n * bits + 7) / 8;
}

// out[j] = low nibble of q[2j] | low nibble of q[2j + 1] << 4; q must have room for q[len].
inline void pack_nibbles(std::uint8_t* q, std::size_t len, std::uint8_t* out) {
  if (len % 2) q[len] = 0;
  for (std::size_t j = 0; j < (len + 1) / 2; ++j) {
    out[j] = static_cast<std::uint8_t>((q[2 * j] & 0x0f) | (q[2 * j + 1] << 4));
  }
}

// Slices that 4-bit encoders quantize into a stack buffer before packing.
inline constexpr std::size_t kNibbleSlice = 256;

}  // namespace loco::compress::detail
