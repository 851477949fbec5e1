#pragma once
// The frame layer after the handshake (docs/PROTOCOL.md, "Frames"). Every frame is
//   header (32 bytes, sent in clear, authenticated) ‖ ciphertext (chunk_bytes) ‖ tag (16 bytes)
// sealed with XChaCha20-Poly1305 under the direction's session key, with the frame counter as the
// nonce. The receiver expects counters 0, 1, 2, ... exactly, so a replayed, reordered or dropped
// frame is refused before any decryption; any altered bit fails the tag.
//
// FrameSealer and FrameOpener are plain codecs (no buffering, no state but the counter); the
// secure channel (secure_channel.hpp) assembles them into messages.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "loco/secure/handshake.hpp"

namespace loco::secure {

inline constexpr std::size_t kFrameHeaderBytes = 32;
inline constexpr std::size_t kFrameTagBytes = 16;

enum class FrameKind : std::uint8_t {
  data = 1,   // a chunk of a message: bytes [offset, offset + chunk_bytes) of message_size
  close = 2,  // the authenticated end of the stream; chunk_bytes, sizes and type are 0
};

struct FrameHeader {
  std::uint64_t counter = 0;
  std::uint64_t message_size = 0;
  std::uint64_t offset = 0;
  std::uint32_t chunk_bytes = 0;
  std::uint16_t message_type = 0;
  FrameKind kind = FrameKind::data;
};

// A frame's size on the wire for a chunk of `chunk_bytes`.
constexpr std::size_t sealed_frame_size(std::size_t chunk_bytes) {
  return kFrameHeaderBytes + chunk_bytes + kFrameTagBytes;
}

class FrameSealer {
 public:
  explicit FrameSealer(const SymmetricKey& key) : key_(key) {}
  ~FrameSealer();

  // Encrypts `chunk` into `out` (exactly sealed_frame_size(chunk.size()) bytes) in one pass;
  // header.counter is set here.
  void seal(FrameHeader header, std::span<const std::byte> chunk, std::span<std::byte> out);

 private:
  SymmetricKey key_;
  std::uint64_t next_counter_ = 0;
};

// Opening a frame takes two steps because its header arrives before its body, and nothing in
// the header can be trusted before the tag over both is checked: body_bytes() reads only the
// length the body allocation needs, open() authenticates and only then checks the rest. So a
// bit flipped on the way is reported as an altered frame, never as something the peer did.
class FrameOpener {
 public:
  FrameOpener(const SymmetricKey& key, std::size_t max_chunk_bytes)
      : key_(key), max_chunk_bytes_(max_chunk_bytes) {}
  ~FrameOpener();

  // The largest chunk accepted from the next frame on (a connection whose state changed).
  void set_max_chunk_bytes(std::size_t bytes) { max_chunk_bytes_ = bytes; }

  // Before authentication: the bytes of ciphertext ‖ tag that follow `header`. A chunk length
  // above the limit throws Error(resource), worded so as not to blame the peer: the header is not
  // authenticated yet, and a bit flipped on the way looks the same.
  std::size_t body_bytes(std::span<const std::byte, kFrameHeaderBytes> header,
                         std::string_view peer) const;

  // Authenticates header ‖ body with the next expected counter as the nonce and decrypts in
  // place (`body` holds ciphertext ‖ tag on entry and the chunk in its first chunk_bytes on
  // return), then decodes and checks the now authenticated header: counter, kind and reserved
  // byte, a close frame empty, a data chunk inside its message. Throws Error(crypto) when the tag
  // fails (altered, replayed, reordered or dropped frame) and Error(protocol), with a message
  // that starts with `peer`, when the authenticated header is malformed.
  FrameHeader open(std::span<const std::byte, kFrameHeaderBytes> header, std::span<std::byte> body,
                   std::string_view peer);

 private:
  SymmetricKey key_;
  std::size_t max_chunk_bytes_;
  std::uint64_t next_counter_ = 0;
};

}  // namespace loco::secure
