#include "loco/proto/message_type.hpp"

#include <fmt/format.h>

#include <array>

#include "loco/core/assert.hpp"
#include "loco/core/utf8.hpp"

namespace loco::proto {
namespace {

constexpr std::uint32_t kKiB = 1024;
constexpr std::uint32_t kMiB = 1024 * kKiB;

// One row per message. max_bytes bounds what a receiver buffers for one message of that type:
// views and resyncs list members (10,000 members fit in 2 MiB), ring chunks carry up to 4 Mi
// values (16 MiB as fp32), everything else is small.
constexpr std::array kMessages = {
    MessageInfo{MessageType::join_request, 3, "join request", 64 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::heartbeat, 3, "heartbeat", 1 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::leave, 1, "leave", 4 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::ready, 4, "ready", 1 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::round_done, 1, "round done", 1 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::round_failed, 1, "round failed", 4 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::state_report, 1, "state report", 1 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::misbehaviour_report, 1, "misbehaviour report", 4 * kKiB,
                Route::peer_to_tracker},
    // A state-transfer message (a chunk at most) carried on the tracker link: the tracker pulls
    // its custody copy from a peer, and serves it (proto/state_relay.hpp).
    MessageInfo{MessageType::state_to_tracker, 1, "state relay to the tracker", kMiB + 2 * kKiB,
                Route::peer_to_tracker},
    MessageInfo{MessageType::view_request, 1, "view request", 1 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::misconduct_proof, 1, "misconduct proof", 1 * kKiB,
                Route::peer_to_tracker},
    // A judge's verdict: a statement, the members it names (a group's at most), a proof.
    MessageInfo{MessageType::verdict, 1, "verdict", 512 * kKiB, Route::peer_to_tracker},
    MessageInfo{MessageType::join_reply, 3, "join reply", 16 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::heartbeat_ack, 1, "heartbeat ack", 1 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::view, 2, "membership view", 2 * kMiB, Route::tracker_to_peer},
    MessageInfo{MessageType::group, 5, "round group", 1 * kMiB, Route::tracker_to_peer},
    MessageInfo{MessageType::commit, 1, "commit", 1 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::abort_round, 1, "round abort", 4 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::resync, 2, "resync", 64 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::state_to_peer, 1, "state relay from the tracker", kMiB + 2 * kKiB,
                Route::tracker_to_peer},
    // At most every member removed and every member added: twice a full view.
    MessageInfo{MessageType::view_delta, 2, "membership view delta", 4 * kMiB,
                Route::tracker_to_peer},
    MessageInfo{MessageType::run_ended, 1, "run ended", 1 * kKiB, Route::tracker_to_peer},
    MessageInfo{MessageType::judge_call, 1, "judge call", 1 * kKiB, Route::tracker_to_peer},
    // A chunk of a ring all-reduce: at most kMaxRingChunkValues values through any codec.
    MessageInfo{MessageType::ring_chunk, 3, "ring chunk", 17 * kMiB, Route::peer_to_peer},
    // A member's chunk out of bounds, with its signature, shown to the group (unit_evidence.hpp).
    MessageInfo{MessageType::evidence, 1, "evidence", 17 * kMiB, Route::peer_to_peer},
    // A disputed segment's contribution, a chunk at a time, and the statements it was summed by
    // (a group's at most), for its judge (judge_messages.hpp).
    MessageInfo{MessageType::judge_chunk, 1, "judge chunk", 17 * kMiB, Route::peer_to_peer},
    MessageInfo{MessageType::judge_inputs, 1, "judge inputs", 2 * kMiB, Route::peer_to_peer},
    // One member's part of an all-gather (DeMo's components of a step): up to 16 MiB.
    MessageInfo{MessageType::all_gather_part, 1, "all-gather part", 16 * kMiB + 64,
                Route::peer_to_peer},
    // State transfer: a manifest lists up to 64 Ki chunk hashes (a 64 GiB state).
    MessageInfo{MessageType::state_request, 1, "state request", 1 * kKiB, Route::peer_to_peer},
    MessageInfo{MessageType::state_manifest, 1, "state manifest", 3 * kMiB, Route::peer_to_peer},
    MessageInfo{MessageType::state_refusal, 1, "state refusal", 4 * kKiB, Route::peer_to_peer},
    MessageInfo{MessageType::chunk_request, 1, "chunk request", 1 * kKiB, Route::peer_to_peer},
    MessageInfo{MessageType::state_chunk, 1, "state chunk", kMiB + kKiB, Route::peer_to_peer},
    // A dataset's train shards, a piece of at most a MiB at a time (shard_transfer.hpp).
    MessageInfo{MessageType::shard_request, 1, "shard request", 64, Route::peer_to_peer},
    MessageInfo{MessageType::shard_piece, 1, "shard piece", kMiB + 64, Route::peer_to_peer},
    MessageInfo{MessageType::shard_refusal, 1, "shard refusal", 1 * kKiB, Route::peer_to_peer},
    // Nothing but the version byte.
    MessageInfo{MessageType::keepalive, 1, "keepalive", 16, Route::peer_to_peer},
    MessageInfo{MessageType::link_open, 1, "link open", 16, Route::peer_to_peer},
    // A relayed link's bytes: a ring chunk whole, or a secure channel's frames (relay_messages).
    MessageInfo{MessageType::relay_data, 1, "relay data", 17 * kMiB + 1 * kKiB,
                Route::peer_to_peer},
    MessageInfo{MessageType::relay_refused, 1, "relay refused", 2 * kKiB, Route::peer_to_peer},
};

}  // namespace

std::optional<MessageInfo> message_info(std::uint16_t type) {
  for (const MessageInfo& m : kMessages)
    if (static_cast<std::uint16_t>(m.type) == type) return m;
  return std::nullopt;
}

const MessageInfo& info(MessageType type) {
  for (const MessageInfo& m : kMessages)
    if (m.type == type) return m;
  LOCO_ASSERT(false, "every MessageType has a row in kMessages");
  return kMessages[0];
}

ByteWriter start_message(MessageType type, std::size_t reserve) {
  ByteWriter w(reserve);
  w.u8(info(type).version);
  return w;
}

ByteReader open_message(std::span<const std::byte> body, MessageType type) {
  const MessageInfo& m = info(type);
  ByteReader r(body, m.name);
  if (body.size() > m.max_bytes)
    r.fail(fmt::format("{} bytes, above its limit of {}", body.size(), m.max_bytes));
  const std::uint8_t version = r.u8();
  if (version != m.version)
    r.fail(
        fmt::format("version {} where this build speaks {}: the two ends run different loco "
                    "releases",
                    version, m.version));
  return r;
}

void write_text(ByteWriter& w, std::string_view text, std::size_t max) {
  std::string shown = printable(text);
  if (shown.size() > max) {
    std::size_t end = 0;  // the longest prefix of whole characters within max
    while (end < shown.size()) {
      const std::size_t next = end + utf8_sequence_length(std::string_view(shown).substr(end));
      if (next > max) break;
      end = next;
    }
    shown.resize(end);
  }
  w.string(shown);
}

std::string read_text(ByteReader& r, std::size_t max) {
  std::string text = r.string(max);
  if (!is_printable_utf8(text)) r.fail("a text field holds control characters or invalid UTF-8");
  return text;
}

}  // namespace loco::proto
