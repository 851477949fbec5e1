#include "loco/proto/relay_messages.hpp"

#include "loco/core/byte_io.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

std::vector<std::byte> encode_relay_data(const RelayHeader& header,
                                         std::span<const std::byte> payload) {
  ByteWriter w = start_message(MessageType::relay_data, kRelayHeaderBytes + payload.size());
  w.u64(header.round);
  w.u32(header.attempt);
  w.bytes(header.peer.bytes);
  w.bytes(payload);
  return w.finish();
}

RelayData decode_relay_data(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::relay_data);
  RelayData m;
  m.header.round = r.u64();
  m.header.attempt = r.u32();
  r.bytes(m.header.peer.bytes);
  m.payload = r.rest();
  return m;
}

std::vector<std::byte> encode(const RelayRefused& m) {
  ByteWriter w = start_message(MessageType::relay_refused);
  w.bytes(m.peer.bytes);
  write_text(w, m.reason, kMaxTextBytes);
  return w.finish();
}

RelayRefused decode_relay_refused(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::relay_refused);
  RelayRefused m;
  r.bytes(m.peer.bytes);
  m.reason = read_text(r, kMaxTextBytes);
  r.expect_end();
  return m;
}

bool relayable(std::uint16_t type, std::size_t size) {
  const auto info = message_info(type);
  return info && info->route == Route::peer_to_peer && size <= info->max_bytes &&
         type != static_cast<std::uint16_t>(MessageType::relay_data) &&
         type != static_cast<std::uint16_t>(MessageType::relay_refused);
}

std::vector<std::byte> encode_plain_payload(MessageType type, std::span<const std::byte> body) {
  ByteWriter w(2 + body.size());
  w.u16(static_cast<std::uint16_t>(type));
  w.bytes(body);
  return w.finish();
}

std::pair<std::uint16_t, std::span<const std::byte>> decode_plain_payload(
    std::span<const std::byte> payload) {
  ByteReader r(payload, "relayed message");
  const std::uint16_t type = r.u16();
  return {type, r.rest()};
}

}  // namespace loco::proto
