#pragma once
// The first message on every stream of a bundle (stream_bundle.hpp), in both directions. The
// initiator's hello names the bundle and the stream's place in it; the responder, once every
// stream of the bundle has arrived, answers each stream with the same record (its welcome).
//
//   byte  0      version: 1
//   byte  1      stream index, below the count
//   byte  2      stream count, 1 .. kMaxStreams
//   byte  3      0
//   bytes 4-7    stripe unit in bytes, little-endian: a power of two, 4 KiB .. 16 MiB
//   bytes 8-23   bundle id: 16 random bytes drawn by the initiator
//
// It travels as one message of type kStreamHelloType in one frame, after the channel's
// handshake, so it is authenticated like everything else: only the peer itself can add a stream
// to its bundle.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loco::net {

inline constexpr std::uint16_t kStreamHelloType = 0xFFFF;
inline constexpr std::size_t kStreamHelloBytes = 24;
inline constexpr std::uint32_t kMaxStreams = 16;
inline constexpr std::uint32_t kMinStripeUnitBytes = 4 << 10;
inline constexpr std::uint32_t kMaxStripeUnitBytes = 16 << 20;

using BundleId = std::array<std::byte, 16>;

struct StreamHello {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  std::uint32_t unit_bytes = 256 << 10;
  BundleId bundle_id{};

  bool operator==(const StreamHello&) const = default;
};

std::array<std::byte, kStreamHelloBytes> encode_stream_hello(const StreamHello& hello);

// Throws Error(protocol) naming `peer_name` and what is wrong.
StreamHello decode_stream_hello(std::span<const std::byte> bytes, const std::string& peer_name);

// The responder's answer to a hello it refuses for lack of room (a full tracker): instead of a
// welcome, one message of type kStreamRefusalType, then the close frame, so the initiator can say
// why instead of reporting a cut connection. Body: version 1, then the reason in UTF-8, at most
// kMaxStreamRefusalBytes in all.
inline constexpr std::uint16_t kStreamRefusalType = 0xFFFE;
inline constexpr std::size_t kMaxStreamRefusalBytes = 256;

std::vector<std::byte> encode_stream_refusal(std::string_view reason);  // cut to fit
// The reason, with invalid UTF-8 and control characters replaced; throws Error(protocol) naming
// `peer_name` for an empty, oversized or unknown-version record.
std::string decode_stream_refusal(std::span<const std::byte> bytes, const std::string& peer_name);

// Throws Error(invalid_argument) unless 1 <= streams <= kMaxStreams and the unit is a power of
// two in [kMinStripeUnitBytes, kMaxStripeUnitBytes].
void validate_bundle_shape(std::uint32_t streams, std::uint32_t unit_bytes);

}  // namespace loco::net
