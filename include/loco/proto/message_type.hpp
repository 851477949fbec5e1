#pragma once
// Every message loco's protocols exchange above the secure channel, with its version. A message
// travels as one channel (or bundle) message whose type is its MessageType; its body starts with
// the version byte, so a peer of another version is told so instead of misreading the fields.
//
// Types are grouped by protocol (high byte): 0x01 peer <-> tracker, 0x02 collectives between the
// members of a round, 0x03 state transfer, 0x04 link upkeep. 0xFFFF is the stream hello of net/
// (stream_hello.hpp), below this layer.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "loco/core/byte_io.hpp"

namespace loco::proto {

enum class MessageType : std::uint16_t {
  // peer -> tracker
  join_request = 0x0101,
  heartbeat = 0x0102,
  leave = 0x0103,
  ready = 0x0104,
  round_done = 0x0105,
  round_failed = 0x0106,
  state_report = 0x0107,
  misbehaviour_report = 0x0108,
  state_to_tracker = 0x0109,  // a state-transfer message for the tracker's custody (state_relay)
  view_request = 0x010A,      // a member that cannot apply a view delta asks for the full view
  misconduct_proof = 0x010B,  // signed statements that show members at fault (owner_check.hpp)
  verdict = 0x010C,           // a judge's finding on a disputed segment (judge_messages.hpp)
  // tracker -> peer
  join_reply = 0x0181,
  heartbeat_ack = 0x0182,
  view = 0x0183,
  group = 0x0184,
  commit = 0x0185,
  abort_round = 0x0186,
  resync = 0x0187,
  state_to_peer = 0x0188,  // a state-transfer message from the tracker's custody (state_relay)
  view_delta = 0x0189,     // the change from one broadcast view to the next
  run_ended = 0x018A,      // the run's final round is committed (and kept, or not, by the tracker)
  judge_call = 0x018B,     // a dispute's judge named to the disputed attempt's members
  // peer <-> peer
  ring_chunk = 0x0201,
  all_gather_part = 0x0202,
  evidence = 0x0203,      // a member's signed chunk out of bounds, shown to its group
  judge_chunk = 0x0204,   // a member's contribution to a disputed segment, for its judge
  judge_inputs = 0x0205,  // the contribution statements a disputed owner or checker summed
  state_request = 0x0301,
  state_manifest = 0x0302,
  state_refusal = 0x0303,
  chunk_request = 0x0304,
  state_chunk = 0x0305,
  shard_request = 0x0306,  // a piece of a dataset's train shard (shard_transfer.hpp)
  shard_piece = 0x0307,
  shard_refusal = 0x0308,
  // peer <-> peer, on an otherwise idle link: keeps it inside the channel's idle timeout
  keepalive = 0x0401,
  // peer -> peer: a member that is not reachable opens its link to a reachable member of its
  // round's group before either has anything to send (link_direction.hpp)
  link_open = 0x0402,
  // peer <-> relay: the bytes of a link between two unreachable members, through a reachable
  // member of their group (relay_messages.hpp)
  relay_data = 0x0403,
  relay_refused = 0x0404,
};

// Which link a message travels on, and in which direction: each receiver accepts only its own.
enum class Route { peer_to_tracker, tracker_to_peer, peer_to_peer };

struct MessageInfo {
  MessageType type;
  std::uint8_t version;     // the body's first byte
  std::string_view name;    // for logs and errors: "join request"
  std::uint32_t max_bytes;  // a larger body is refused before it is decoded
  Route route;
};

// The table entry of a type, or nothing for a type this build does not know.
std::optional<MessageInfo> message_info(std::uint16_t type);
// The entry of a known type.
const MessageInfo& info(MessageType type);

// A writer of a message of `type`, its version byte written.
ByteWriter start_message(MessageType type, std::size_t reserve = 0);
// A reader of a message of `type` positioned after its version byte. Throws Error(format) when
// the body is above the type's size limit or of another version.
ByteReader open_message(std::span<const std::byte> body, MessageType type);

// A text field (a reason, an address, a setting): at most `max` bytes of printable UTF-8
// (core/utf8.hpp). Written made printable and cut to `max` at a character boundary; read, text
// that is not printable is refused (Error(format)), so nothing a peer sends can forge a log line.
void write_text(ByteWriter& w, std::string_view text, std::size_t max);
std::string read_text(ByteReader& r, std::size_t max);

}  // namespace loco::proto
