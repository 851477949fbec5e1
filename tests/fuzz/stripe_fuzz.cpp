// Fuzz target: the stripe assembler (stripe_assembler.hpp), the message assembler behind it
// (message_assembler.hpp), and the hello and refusal records (stream_hello.hpp)
// over any chunk sequence, including ones the channel refuses today (a size or type that changes
// mid-message, an offset that jumps): the assembler must not rely on the channel for its own
// safety. channel_fuzz.cpp drives the same assembler behind real channels.
// The input is a list of records, each one chunk of one stream's current channel message:
//   [stream | flags][type][size lo][size hi][n] then n bytes of data
// A stream starts a message of `size` bytes when it has none in progress; otherwise type and size
// are ignored unless flag 0x80 is set (the chunk states them anew), and the offset continues
// unless flag 0x40 is set (the chunk goes to offset `size / 2`). Data is cut to fit its message.
// Seeds: a valid transfer.

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/net/message_assembler.hpp"
#include "loco/net/stream_hello.hpp"
#include "loco/net/stripe_assembler.hpp"

namespace {

using namespace loco::net;

constexpr std::uint32_t kStreams = 3;
constexpr std::uint32_t kUnit = 4096;
constexpr std::uint64_t kMaxMessage = 1 << 20;

void append_record(std::vector<std::uint8_t>& out, std::uint8_t stream, std::uint8_t type,
                   std::uint16_t size, std::span<const std::byte> data) {
  out.insert(out.end(),
             {stream, type, static_cast<std::uint8_t>(size & 0xff),
              static_cast<std::uint8_t>(size >> 8), static_cast<std::uint8_t>(data.size())});
  for (const std::byte b : data) out.push_back(std::to_integer<std::uint8_t>(b));
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  std::vector<std::uint8_t> input;
  const auto hello =
      encode_stream_hello({.index = 1, .count = 3, .unit_bytes = kUnit, .bundle_id = {}});
  for (const std::byte b : hello) input.push_back(std::to_integer<std::uint8_t>(b));
  std::vector<std::byte> message(9000);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::byte>(i * 31);
  const StripeLayout layout(message.size(), kUnit, kStreams);
  const auto header = encode_stripe_header(message.size());
  for (std::uint8_t s = 0; s < kStreams; ++s) {
    std::vector<std::byte> stripe(header.begin(), header.end());
    std::vector<std::span<const std::byte>> parts;
    layout.append_stripe(s, message, parts);
    for (const auto part : parts) stripe.insert(stripe.end(), part.begin(), part.end());
    for (std::size_t at = 0; at < stripe.size(); at += 200) {
      const auto chunk =
          std::span(stripe).subspan(at, std::min<std::size_t>(200, stripe.size() - at));
      append_record(input, s, 5, static_cast<std::uint16_t>(stripe.size()), chunk);
    }
  }
  return {input};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = std::as_bytes(std::span(data, size));
  if (input.size() >= kStreamHelloBytes) {
    try {
      (void)decode_stream_hello(input.first(kStreamHelloBytes), "fuzz");
    } catch (const loco::Error&) {
    }
    try {
      (void)decode_stream_refusal(input.first(kStreamHelloBytes), "fuzz");
    } catch (const loco::Error&) {
    }
    input = input.subspan(kStreamHelloBytes);
  }
  StripeAssembler assembler(kStreams, kUnit, kMaxMessage);
  // Whole messages behind it, as the tracker and the peer mesh put them together, with a cap
  // below the largest message so that both outcomes happen.
  MessageAssembler messages([](std::uint16_t) { return std::optional<std::uint64_t>(kMaxMessage); },
                            kMaxMessage / 2);
  struct Current {
    std::uint16_t type = 0;
    std::uint64_t size = 0;
    std::uint64_t offset = 0;
    bool active = false;
  };
  std::array<Current, kStreams> current{};
  try {
    while (input.size() >= 5) {
      const auto head = std::to_integer<std::uint32_t>(input[0]);
      const auto stream = (head & 0x3f) % kStreams;
      const auto type = std::to_integer<std::uint16_t>(input[1]);
      const auto stated_size =
          std::to_integer<std::uint64_t>(input[2]) | std::to_integer<std::uint64_t>(input[3]) << 8;
      Current& c = current[stream];
      if (!c.active || (head & 0x80) != 0) {
        c.type = type;
        c.size = stated_size;
        if (!c.active) c.offset = 0;
        c.active = true;
      }
      if ((head & 0x40) != 0) c.offset = stated_size / 2;
      c.offset = std::min(c.offset, c.size);
      const std::size_t n = std::min<std::size_t>(
          {std::to_integer<std::size_t>(input[4]), input.size() - 5, c.size - c.offset});
      const loco::secure::ChannelEvent chunk{.kind = loco::secure::ChannelEvent::Kind::chunk,
                                             .message_type = c.type,
                                             .message_size = c.size,
                                             .offset = c.offset,
                                             .data = input.subspan(5, n)};
      input = input.subspan(5 + n);
      c.offset += n;
      if (c.offset == c.size) c.active = false;
      for (const BundleChunk& piece : assembler.handle_chunk(stream, chunk)) {
        if (piece.offset + piece.data.size() > piece.message_size) __builtin_trap();
        const auto whole = messages.add(piece);
        if (whole && whole->bytes.size() != piece.message_size) __builtin_trap();
        if (messages.buffered() > kMaxMessage / 2) __builtin_trap();
      }
    }
  } catch (const loco::Error&) {
    // refused: the bundle would close
  }
  return 0;
}
