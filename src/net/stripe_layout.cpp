#include "loco/net/stripe_layout.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"

namespace loco::net {

StripeLayout::StripeLayout(std::uint64_t message_bytes, std::uint32_t unit_bytes,
                           std::uint32_t streams)
    : message_bytes_(message_bytes), unit_bytes_(unit_bytes), streams_(streams) {
  LOCO_ASSERT(unit_bytes > 0 && streams > 0, "a stripe layout needs units and streams");
}

std::uint64_t StripeLayout::stripe_bytes(std::uint32_t stream) const {
  LOCO_ASSERT(stream < streams_, "stream index out of range");
  const std::uint64_t units = (message_bytes_ + unit_bytes_ - 1) / unit_bytes_;
  if (stream >= units) return 0;
  const std::uint64_t mine = (units - 1 - stream) / streams_ + 1;
  const bool has_last_unit = (units - 1) % streams_ == stream;
  const std::uint64_t last_unit_bytes = message_bytes_ - (units - 1) * unit_bytes_;
  return has_last_unit ? (mine - 1) * unit_bytes_ + last_unit_bytes : mine * unit_bytes_;
}

StripeLayout::Run StripeLayout::locate(std::uint32_t stream, std::uint64_t stripe_offset) const {
  LOCO_ASSERT(stripe_offset < stripe_bytes(stream), "offset beyond the stripe");
  const std::uint64_t unit = stripe_offset / unit_bytes_ * streams_ + stream;
  const std::uint64_t within = stripe_offset % unit_bytes_;
  const std::uint64_t message_offset = unit * unit_bytes_ + within;
  const std::uint64_t unit_end = std::min(message_bytes_, (unit + 1) * unit_bytes_);
  return {message_offset, unit_end - message_offset};
}

void StripeLayout::append_stripe(std::uint32_t stream, std::span<const std::byte> message,
                                 std::vector<std::span<const std::byte>>& parts) const {
  LOCO_ASSERT(message.size() == message_bytes_, "the message does not match its layout");
  for (std::uint64_t at = stream * unit_bytes_; at < message_bytes_; at += streams_ * unit_bytes_)
    parts.push_back(message.subspan(at, std::min(unit_bytes_, message_bytes_ - at)));
}

std::array<std::byte, kStripeHeaderBytes> encode_stripe_header(std::uint64_t message_bytes) {
  std::array<std::byte, kStripeHeaderBytes> header{};
  store_le(header.data(), message_bytes);
  return header;
}

std::uint64_t decode_stripe_header(std::span<const std::byte, kStripeHeaderBytes> header) {
  return load_le<std::uint64_t>(header.data());
}

}  // namespace loco::net
