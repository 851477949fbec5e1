#pragma once
// An authenticated peer that sends whatever frames it likes, as an attacker with a valid key
// would: a real initiator handshake (secure/handshake.hpp), then frames sealed by hand with any
// header fields (sizes, types, offsets, kinds) under the session's real keys. Sans-I/O: the
// caller moves the bytes (a socket in program tests, a SecureChannel in fuzzers and unit tests).
//
// Call order: take() → message 1; give(message 2); take() → message 3; established() is true;
// then seal() frames and open() the responder's frames.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "loco/secure/frame_codec.hpp"
#include "loco/secure/handshake.hpp"

namespace loco::test {

class RawPeer {
 public:
  using Bytes = std::vector<std::byte>;

  RawPeer(const secure::KeyPair& key, const std::string& run_id,
          const secure::EphemeralSeed& seed = secure::fresh_ephemeral_seed())
      : handshake_(
            secure::Role::initiator, key, run_id, [](const secure::PublicKey&) { return true; },
            "responder", seed) {}

  // The next handshake message to send, or nothing.
  Bytes take() {
    const auto message = handshake_.poll_transmit();
    if (!message) return {};
    if (handshake_.done()) start_frames();
    const auto* p = reinterpret_cast<const std::byte*>(message->data());
    return Bytes(p, p + message->size());
  }

  std::size_t next_handshake_bytes() const { return handshake_.next_message_size(); }

  // The responder's handshake message (throws loco::Error when it does not authenticate).
  void give(std::span<const std::byte> message) {
    handshake_.handle_message(
        std::span(reinterpret_cast<const std::uint8_t*>(message.data()), message.size()));
  }

  bool established() const { return sealer_ != nullptr; }

  // One frame with exactly these header fields (counter aside, which the sealer numbers).
  Bytes seal(secure::FrameHeader header, std::span<const std::byte> chunk) {
    header.chunk_bytes = static_cast<std::uint32_t>(chunk.size());
    Bytes frame(secure::sealed_frame_size(chunk.size()));
    sealer_->seal(header, chunk, frame);
    return frame;
  }

  // A data frame of a message of `message_size` bytes: the chunk at `offset`.
  Bytes data(std::uint16_t type, std::uint64_t message_size, std::uint64_t offset,
             std::span<const std::byte> chunk) {
    return seal({.message_size = message_size, .offset = offset, .message_type = type}, chunk);
  }

  // Opens one frame of the responder's (header ‖ body), returning its header and, in `chunk`, its
  // plaintext. Throws loco::Error like the channel would.
  secure::FrameHeader open(std::span<const std::byte> frame, Bytes& chunk) {
    const auto header = frame.first<secure::kFrameHeaderBytes>();
    chunk.assign(frame.begin() + secure::kFrameHeaderBytes, frame.end());
    const secure::FrameHeader parsed = opener_->open(header, chunk, "responder");
    chunk.resize(parsed.chunk_bytes);
    return parsed;
  }
  std::size_t body_bytes(std::span<const std::byte, secure::kFrameHeaderBytes> header) const {
    return opener_->body_bytes(header, "responder");
  }

 private:
  void start_frames() {
    const secure::SessionKeys& keys = handshake_.session_keys();
    sealer_ = std::make_unique<secure::FrameSealer>(keys.send);
    opener_ = std::make_unique<secure::FrameOpener>(keys.receive, std::size_t{1} << 24);
  }

  secure::Handshake handshake_;
  std::unique_ptr<secure::FrameSealer> sealer_;
  std::unique_ptr<secure::FrameOpener> opener_;
};

}  // namespace loco::test
