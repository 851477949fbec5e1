// Fuzz target: the frame decoder (loco/secure/frame_codec.hpp) over a stream of untrusted bytes,
// with a fixed session key so that seed frames authenticate and mutations reach every check.
// Seeds: real frames sealed with that key (a multi-frame message, an empty one, a close frame).

#include <array>
#include <cstdint>
#include <vector>

#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/secure/frame_codec.hpp"

namespace {

using namespace loco::secure;

constexpr SymmetricKey kKey = {7, 7, 7};
constexpr std::size_t kMaxChunk = 1024;

void append_frame(FrameSealer& sealer, FrameHeader header, std::vector<std::byte> chunk,
                  std::vector<std::uint8_t>& out) {
  std::vector<std::byte> frame(sealed_frame_size(chunk.size()));
  header.chunk_bytes = static_cast<std::uint32_t>(chunk.size());
  sealer.seal(header, chunk, frame);
  const auto* p = reinterpret_cast<const std::uint8_t*>(frame.data());
  out.insert(out.end(), p, p + frame.size());
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  FrameSealer sealer(kKey);
  std::vector<std::uint8_t> stream;
  const std::vector<std::byte> part(600, std::byte{0x5a});
  append_frame(sealer, {.message_size = 1200, .offset = 0, .message_type = 3}, part, stream);
  append_frame(sealer, {.message_size = 1200, .offset = 600, .message_type = 3}, part, stream);
  append_frame(sealer, {.message_type = 4}, {}, stream);
  append_frame(sealer, {.kind = FrameKind::close}, {}, stream);
  return {stream};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FrameOpener opener(kKey, kMaxChunk);
  std::vector<std::byte> body;
  std::span<const std::byte> input = std::as_bytes(std::span(data, size));
  try {
    while (input.size() >= kFrameHeaderBytes) {
      const auto header_bytes = input.first<kFrameHeaderBytes>();
      const std::size_t body_bytes = opener.body_bytes(header_bytes, "fuzz");  // ≤ kMaxChunk + 16
      if (input.size() < kFrameHeaderBytes + body_bytes) break;
      body.assign(input.begin() + kFrameHeaderBytes,
                  input.begin() + static_cast<std::ptrdiff_t>(kFrameHeaderBytes + body_bytes));
      const FrameHeader header = opener.open(header_bytes, body, "fuzz");
      if (header.chunk_bytes + kFrameTagBytes != body_bytes) __builtin_trap();
      input = input.subspan(kFrameHeaderBytes + body_bytes);
    }
  } catch (const loco::Error&) {
    // Refused with a typed error: the expected outcome for malformed frames.
  }
  return 0;
}
