#include "block_codec.hpp"

#include <cmath>
#include <cstring>

#include "loco/core/assert.hpp"
#include "wire.hpp"

namespace loco::compress::detail {

BlockScaledCodec::BlockScaledCodec(BlockFormat format, std::size_t block, bool stochastic)
    : format_(format), block_(block), stochastic_(stochastic) {
  LOCO_ASSERT(block_ % 8 == 0 && block_ >= 8 && block_ <= kMaxBlockSize, "block size out of range");
}

std::string BlockScaledCodec::spec() const {
  return std::string(format_.name) + ":block=" + std::to_string(block_) +
         (format_.id == CodecId::sign
              ? ""
              : std::string(",round=") + (stochastic_ ? "stochastic" : "nearest"));
}

std::size_t BlockScaledCodec::max_encoded_size(std::size_t count) const {
  const std::size_t blocks = (count + block_ - 1) / block_;
  return kHeaderBytes + 4 + 4 * blocks + code_bytes(count, format_.bits);
}

std::vector<std::byte> BlockScaledCodec::encode(std::span<const float> values,
                                                const EncodeOptions& options) const {
  check_shape(options.shape, values.size(), format_.name);
  const std::size_t n = values.size();
  const std::size_t blocks = (n + block_ - 1) / block_;
  wire::Writer w(max_encoded_size(n));
  w.header(format_.id, n);
  w.u32(static_cast<std::uint32_t>(block_));
  std::byte* scales = w.extend(4 * blocks);
  std::byte* codes = w.extend(code_bytes(n, format_.bits));
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t first = b * block_;
    const std::size_t len = std::min(block_, n - first);
    const float scale = encode_block(values.subspan(first, len), codes + first * format_.bits / 8,
                                     first, options.seed);
    std::memcpy(scales + 4 * b, &scale, 4);
  }
  return w.finish();
}

BlockView BlockScaledCodec::parse(std::span<const std::byte> message, std::size_t count) const {
  wire::Reader r(message, format_.name);
  r.header(format_.id, count);
  const std::size_t block = r.u32();
  if (block < 8 || block % 8 != 0 || block > kMaxBlockSize) {
    r.fail("block size " + std::to_string(block) + " is not a multiple of 8 in [8, 2^24]");
  }
  const std::size_t blocks = (count + block - 1) / block;
  r.expect_remaining(wire::checked_size(format_.name, blocks, 4, code_bytes(count, format_.bits)));
  BlockView view{count, block, r.take(4 * blocks), nullptr};
  view.codes = r.take(code_bytes(count, format_.bits));
  for (std::size_t b = 0; b < blocks; ++b) {
    float scale;
    std::memcpy(&scale, view.scales + 4 * b, 4);
    if (!(scale >= 0.0f) || !std::isfinite(scale)) {
      r.fail("block " + std::to_string(b) + " has a negative or non-finite scale");
    }
  }
  return view;
}

void BlockScaledCodec::decode_range(const BlockView& view, std::size_t begin, std::size_t end,
                                    float* out) const {
  LOCO_DEBUG_ASSERT(begin % 8 == 0, "packed codes are decoded from byte boundaries");
  std::size_t i = begin;
  while (i < end) {
    const std::size_t b = i / view.block;
    const std::size_t stop = std::min(end, (b + 1) * view.block);
    float scale;
    std::memcpy(&scale, view.scales + 4 * b, 4);
    decode_block(view.codes + i * format_.bits / 8, stop - i, scale, out + (i - begin));
    i = stop;
  }
}

}  // namespace loco::compress::detail
