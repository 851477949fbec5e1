#include "loco/secure/frame_codec.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"

namespace loco::secure {
namespace {

static_assert(kFrameTagBytes == crypto_aead_xchacha20poly1305_ietf_ABYTES);

using Nonce = std::array<std::uint8_t, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES>;

Nonce nonce_for(std::uint64_t counter) {
  Nonce nonce{};
  store_le(reinterpret_cast<std::byte*>(nonce.data()), counter);
  return nonce;
}

void encode(const FrameHeader& header, std::span<std::byte, kFrameHeaderBytes> out) {
  store_le(out.data(), header.counter);
  store_le(out.data() + 8, header.message_size);
  store_le(out.data() + 16, header.offset);
  store_le(out.data() + 24, header.chunk_bytes);
  store_le(out.data() + 28, header.message_type);
  out[30] = static_cast<std::byte>(header.kind);
  out[31] = std::byte{0};
}

const unsigned char* u8(const std::byte* p) {
  return reinterpret_cast<const unsigned char*>(p);
}
unsigned char* u8(std::byte* p) {
  return reinterpret_cast<unsigned char*>(p);
}

}  // namespace

FrameSealer::~FrameSealer() {
  sodium_memzero(key_.data(), key_.size());
}

void FrameSealer::seal(FrameHeader header, std::span<const std::byte> chunk,
                       std::span<std::byte> out) {
  LOCO_ASSERT(out.size() == sealed_frame_size(chunk.size()), "frame buffer of the wrong size");
  LOCO_ASSERT(chunk.size() == header.chunk_bytes, "header does not describe the chunk");
  LOCO_ASSERT(next_counter_ != UINT64_MAX, "frame counter exhausted");
  header.counter = next_counter_++;
  const auto header_bytes = out.first<kFrameHeaderBytes>();
  encode(header, header_bytes);
  const Nonce nonce = nonce_for(header.counter);
  std::byte* cipher = out.data() + kFrameHeaderBytes;
  crypto_aead_xchacha20poly1305_ietf_encrypt_detached(
      u8(cipher), u8(cipher + chunk.size()), nullptr, u8(chunk.data()), chunk.size(),
      u8(header_bytes.data()), header_bytes.size(), nullptr, nonce.data(), key_.data());
}

FrameOpener::~FrameOpener() {
  sodium_memzero(key_.data(), key_.size());
}

std::size_t FrameOpener::body_bytes(std::span<const std::byte, kFrameHeaderBytes> header,
                                    std::string_view peer) const {
  const auto chunk_bytes = load_le<std::uint32_t>(header.data() + 24);
  if (chunk_bytes > max_chunk_bytes_)
    throw Error(ErrorCategory::resource,
                fmt::format("the connection with {} carried an unauthenticated frame header "
                            "announcing {} bytes, above our frame limit of {} bytes: either that "
                            "peer sends larger frames than we accept, or the stream was altered "
                            "on the way",
                            peer, chunk_bytes, max_chunk_bytes_));
  return chunk_bytes + kFrameTagBytes;
}

FrameHeader FrameOpener::open(std::span<const std::byte, kFrameHeaderBytes> in,
                              std::span<std::byte> body, std::string_view peer) {
  LOCO_ASSERT(body.size() == body_bytes(in, peer), "frame body of the wrong size");
  const std::size_t chunk_bytes = body.size() - kFrameTagBytes;
  const Nonce nonce = nonce_for(next_counter_);
  if (crypto_aead_xchacha20poly1305_ietf_decrypt_detached(
          u8(body.data()), nullptr, u8(body.data()), chunk_bytes, u8(body.data() + chunk_bytes),
          u8(in.data()), in.size(), nonce.data(), key_.data()) != 0)
    throw Error(ErrorCategory::crypto,
                fmt::format("frame {} from {} does not authenticate: altered on the way, or a "
                            "replayed, reordered or dropped frame",
                            next_counter_, peer));
  // Authenticated: from here on every field is what the peer sent.
  FrameHeader header;
  header.counter = load_le<std::uint64_t>(in.data());
  header.message_size = load_le<std::uint64_t>(in.data() + 8);
  header.offset = load_le<std::uint64_t>(in.data() + 16);
  header.chunk_bytes = load_le<std::uint32_t>(in.data() + 24);
  header.message_type = load_le<std::uint16_t>(in.data() + 28);
  const auto kind = static_cast<std::uint8_t>(in[30]);
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorCategory::protocol, fmt::format("{} {}", peer, what));
  };
  if (header.counter != next_counter_)
    fail(fmt::format("numbered frame {} as {}", next_counter_, header.counter));
  if ((kind != 1 && kind != 2) || in[31] != std::byte{0})
    fail(fmt::format("sent a frame of unknown kind {}", kind));
  header.kind = static_cast<FrameKind>(kind);
  if (header.kind == FrameKind::close && (header.chunk_bytes != 0 || header.message_size != 0 ||
                                          header.offset != 0 || header.message_type != 0))
    fail("sent a malformed close frame");
  if (header.kind == FrameKind::data && (header.offset > header.message_size ||
                                         header.chunk_bytes > header.message_size - header.offset))
    fail(fmt::format("sent a chunk [{}, +{}) outside its message of {} bytes", header.offset,
                     header.chunk_bytes, header.message_size));
  ++next_counter_;
  return header;
}

}  // namespace loco::secure
