// Fuzz target: everything an authenticated peer can send to the receiving side of a stream bundle.
// Two streams, each a real SecureChannel (the responder) that completes a real handshake with a
// RawPeer (fixed keys and ephemeral seeds, so an input replays exactly); then the input's records
// become frames sealed under the session's keys with any header fields: sizes and types that
// change mid-message, offsets that skip or repeat, close frames, raw garbage. The chunk events of
// both channels go into one real StripeAssembler, as in a bundle. Everything must end in a typed
// loco::Error or in consistent pieces, never in a crash or a broken invariant.
//
// Input: records of 7 bytes plus data:
//   [0] bit 0: stream; bits 1-2: what (0 exact header, 1 next chunk, 2 close, 3 raw bytes);
//       bits 4-7: size shift
//   [1] message type  [2-3] message size (u16, shifted left by the size shift)
//   [4-5] offset (u16)  [6] n, then n data bytes
// "next chunk" continues the stream's open message at the right offset with its size and type (or
// starts a message of the record's size and type), so valid transfers are easy to reach; "exact
// header" takes the record's size, type and offset as they are.

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "../support/raw_peer.hpp"
#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/net/stripe_assembler.hpp"
#include "loco/secure/secure_channel.hpp"

namespace {

using namespace loco;
using Bytes = std::vector<std::byte>;

constexpr std::uint32_t kStreams = 2;
constexpr std::uint32_t kUnit = 4096;
constexpr std::uint64_t kMaxMessage = 1 << 20;

const secure::KeyPair& attacker_key() {
  static const secure::KeyPair key = secure::KeyPair::from_seed(std::array<std::uint8_t, 32>{9});
  return key;
}
const secure::KeyPair& victim_key() {
  static const secure::KeyPair key = secure::KeyPair::from_seed(std::array<std::uint8_t, 32>{10});
  return key;
}

// One stream: the attacker's RawPeer and the victim's channel, with the handshake done.
struct Stream {
  test::RawPeer attacker;
  secure::SecureChannel victim;
  std::uint16_t open_type = 0;
  std::uint64_t open_size = 0;
  std::uint64_t sent = 0;  // of the open message
  bool open = false;

  explicit Stream(std::uint8_t index)
      : attacker(attacker_key(), "fuzz-run", secure::EphemeralSeed{20, index}),
        victim(
            secure::Role::responder, victim_key(), config(),
            [](const secure::PublicKey&) { return true; }, "fuzz", TimePoint{},
            secure::EphemeralSeed{30, index}) {
    const auto ignore = [](const secure::ChannelEvent&) {};
    secure::deliver(victim, TimePoint{}, attacker.take(), ignore);
    attacker.give(take_victim_bytes());
    secure::deliver(victim, TimePoint{}, attacker.take(), ignore);
  }

  static secure::ChannelConfig config() {
    secure::ChannelConfig c;
    c.run_id = "fuzz-run";
    c.max_frame_bytes = 4096;
    c.max_message_bytes = kMaxMessage;
    return c;
  }

  Bytes take_victim_bytes() {
    Bytes out;
    for (auto bytes = victim.poll_transmit(); !bytes.empty(); bytes = victim.poll_transmit()) {
      out.insert(out.end(), bytes.begin(), bytes.end());
      victim.handle_transmitted(TimePoint{}, bytes.size());
    }
    return out;
  }

  // The frame a "next chunk" record becomes.
  Bytes next_chunk(std::uint16_t type, std::uint64_t size, std::span<const std::byte> data) {
    if (!open) {
      open_type = type;
      open_size = size;
      sent = 0;
    }
    data = data.first(std::min<std::uint64_t>(data.size(), open_size - sent));
    Bytes frame = attacker.data(open_type, open_size, sent, data);
    sent += data.size();
    open = sent < open_size;
    return frame;
  }
};

struct Record {
  std::uint32_t stream;
  std::uint32_t what;
  std::uint16_t type;
  std::uint64_t size;
  std::uint64_t offset;
  std::span<const std::byte> data;
};

// Splits off the next record; false when the input is used up.
bool next_record(std::span<const std::byte>& input, Record& r) {
  if (input.size() < 7) return false;
  const auto byte = [&](std::size_t i) { return std::to_integer<std::uint32_t>(input[i]); };
  r.stream = byte(0) & 1;
  r.what = byte(0) >> 1 & 3;
  r.type = static_cast<std::uint16_t>(byte(1));
  r.size = static_cast<std::uint64_t>(byte(2) | byte(3) << 8) << (byte(0) >> 4);
  r.offset = byte(4) | byte(5) << 8;
  const std::size_t n = std::min<std::size_t>(byte(6), input.size() - 7);
  r.data = input.subspan(7, n);
  input = input.subspan(7 + n);
  return true;
}

void append_record(std::vector<std::uint8_t>& out, std::uint8_t head, std::uint8_t type,
                   std::uint16_t size, std::span<const std::byte> data) {
  out.insert(out.end(),
             {head, type, static_cast<std::uint8_t>(size & 0xff),
              static_cast<std::uint8_t>(size >> 8), 0, 0, static_cast<std::uint8_t>(data.size())});
  for (const std::byte b : data) out.push_back(std::to_integer<std::uint8_t>(b));
}

}  // namespace

// A valid bundle message of 9000 bytes striped over both streams, sent as "next chunk" records of
// up to 200 bytes, the streams interleaved.
std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  Bytes message(9000);
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<std::byte>(i * 13);
  const net::StripeLayout layout(message.size(), kUnit, kStreams);
  std::array<Bytes, kStreams> stripes;
  for (std::uint32_t s = 0; s < kStreams; ++s) {
    const auto header = net::encode_stripe_header(message.size());
    stripes[s].assign(header.begin(), header.end());
    std::vector<std::span<const std::byte>> parts;
    layout.append_stripe(s, message, parts);
    for (const auto part : parts) stripes[s].insert(stripes[s].end(), part.begin(), part.end());
  }
  std::vector<std::uint8_t> input;
  std::array<std::size_t, kStreams> at{};
  while (at[0] < stripes[0].size() || at[1] < stripes[1].size()) {
    for (std::uint8_t s = 0; s < kStreams; ++s) {
      if (at[s] >= stripes[s].size()) continue;
      const std::size_t n = std::min<std::size_t>(200, stripes[s].size() - at[s]);
      append_record(input, static_cast<std::uint8_t>(s | 1 << 1), 7,
                    static_cast<std::uint16_t>(stripes[s].size()),
                    std::span(stripes[s]).subspan(at[s], n));
      at[s] += n;
    }
  }
  return {input};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = std::as_bytes(std::span(data, size));
  std::array<Stream, kStreams> streams{Stream(0), Stream(1)};
  net::StripeAssembler assembler(kStreams, kUnit, kMaxMessage);
  std::map<std::uint64_t, std::uint64_t> delivered;  // bytes handed up, by bundle message
  try {
    Record r;
    while (next_record(input, r)) {
      Stream& stream = streams[r.stream];
      Bytes frame;
      switch (r.what) {
        case 0: frame = stream.attacker.data(r.type, r.size, r.offset, r.data); break;
        case 1: frame = stream.next_chunk(r.type, r.size, r.data); break;
        case 2: frame = stream.attacker.seal({.kind = secure::FrameKind::close}, {}); break;
        default: frame.assign(r.data.begin(), r.data.end()); break;
      }
      secure::deliver(stream.victim, TimePoint{}, frame, [&](const secure::ChannelEvent& event) {
        if (event.kind != secure::ChannelEvent::Kind::chunk) return;
        for (const net::BundleChunk& piece : assembler.handle_chunk(r.stream, event)) {
          if (piece.offset + piece.data.size() > piece.message_size) __builtin_trap();
          delivered[piece.sequence] += piece.data.size();
          if (piece.completes_message) {
            if (delivered[piece.sequence] != piece.message_size) __builtin_trap();  // holes
            delivered.erase(piece.sequence);
          }
        }
      });
    }
  } catch (const Error&) {
    // Refused with a typed error: the bundle would close.
  }
  return 0;
}
