#include "loco/proto/state_relay.hpp"

#include <fmt/format.h>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"

namespace loco::proto {

bool is_state_transfer(MessageType type) {
  switch (type) {
    case MessageType::state_request:
    case MessageType::state_manifest:
    case MessageType::state_refusal:
    case MessageType::chunk_request:
    case MessageType::state_chunk: return true;
    default: return false;
  }
}

bool is_state_request(MessageType type) {
  return type == MessageType::state_request || type == MessageType::chunk_request;
}

std::vector<std::byte> encode_relay(MessageType outer, MessageType inner,
                                    std::span<const std::byte> body) {
  LOCO_ASSERT(outer == MessageType::state_to_tracker || outer == MessageType::state_to_peer,
              "a relay travels as state_to_tracker or state_to_peer");
  LOCO_ASSERT(is_state_transfer(inner), "only state-transfer messages are relayed");
  ByteWriter w = start_message(outer, body.size() + 3);
  w.u16(static_cast<std::uint16_t>(inner));
  w.bytes(body);
  std::vector<std::byte> out = w.finish();
  LOCO_ASSERT(out.size() <= info(outer).max_bytes, "a relayed message exceeds the relay's limit");
  return out;
}

StateRelay decode_relay(MessageType outer, std::span<const std::byte> body) {
  ByteReader r = open_message(body, outer);
  const std::uint16_t inner = r.u16();
  const auto known = message_info(inner);
  if (!known || !is_state_transfer(known->type))
    r.fail(
        fmt::format("it carries a message of type {:#06x}, not a state-transfer message", inner));
  const std::span<const std::byte> rest = r.rest();
  if (rest.size() > known->max_bytes)
    r.fail(fmt::format("the {} it carries is {} bytes, above its limit of {}", known->name,
                       rest.size(), known->max_bytes));
  return StateRelay{.inner = known->type, .body = rest};
}

}  // namespace loco::proto
