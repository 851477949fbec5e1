#pragma once
// How a message is split across the N parallel streams of a bundle (stream_bundle.hpp): cut into
// units of U bytes, dealt round-robin, unit u to stream u mod N. Each stream carries its share
// as one channel message: an 8-byte stripe header (the whole message's size, little-endian)
// followed by its units in order. Round-robin keeps the streams within one unit of each other
// and the message arriving roughly front to back, so a consumer can start on the first units
// while the last are in flight.
//
//   message  | u0 | u1 | u2 | u3 | u4 | u5 | u6 |t|     (S bytes; the last unit may be short)
//   stream 0 | hdr | u0 | u3 | u6 |
//   stream 1 | hdr | u1 | u4 |t|
//   stream 2 | hdr | u2 | u5 |
//
// Every stream carries a stripe message for every bundle message, even an empty one (only the
// header), so the k-th message on each stream is a stripe of the bundle's k-th message.
// Cost: 8 bytes + one frame per stream per message; the bytes on the wire are otherwise S.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace loco::net {

inline constexpr std::size_t kStripeHeaderBytes = 8;

class StripeLayout {
 public:
  // `unit_bytes` > 0, `streams` > 0.
  StripeLayout(std::uint64_t message_bytes, std::uint32_t unit_bytes, std::uint32_t streams);

  std::uint64_t message_bytes() const { return message_bytes_; }
  // Payload bytes of stream `stream`'s stripe (without the header).
  std::uint64_t stripe_bytes(std::uint32_t stream) const;

  // The message offset of byte `stripe_offset` of stream `stream`'s stripe, and how many bytes
  // from there on are contiguous in the message (to the end of that unit).
  struct Run {
    std::uint64_t message_offset;
    std::uint64_t bytes;
  };
  Run locate(std::uint32_t stream, std::uint64_t stripe_offset) const;

  // Appends stream `stream`'s units of `message` (message_bytes() long) to `parts`, in order.
  void append_stripe(std::uint32_t stream, std::span<const std::byte> message,
                     std::vector<std::span<const std::byte>>& parts) const;

 private:
  std::uint64_t message_bytes_;
  std::uint64_t unit_bytes_;
  std::uint64_t streams_;
};

std::array<std::byte, kStripeHeaderBytes> encode_stripe_header(std::uint64_t message_bytes);
std::uint64_t decode_stripe_header(std::span<const std::byte, kStripeHeaderBytes> header);

}  // namespace loco::net
