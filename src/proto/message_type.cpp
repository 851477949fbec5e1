#include "loco/proto/message_type.hpp"

#include <array>

#include "loco/core/assert.hpp"

namespace loco::proto {
namespace {

constexpr std::uint32_t kKiB = 1024;
constexpr std::uint32_t kMiB = 1024 * kKiB;

// One row per message. max_bytes bounds what a receiver buffers for one message of that type:
// views and resyncs list members (10,000 members fit in 2 MiB), everything else is small.
constexpr std::array kMessages = {
    MessageInfo{MessageType::join_request, 1, "join request", 64 * kKiB, Sender::peer},
    MessageInfo{MessageType::heartbeat, 1, "heartbeat", 1 * kKiB, Sender::peer},
    MessageInfo{MessageType::leave, 1, "leave", 4 * kKiB, Sender::peer},
    MessageInfo{MessageType::ready, 1, "ready", 1 * kKiB, Sender::peer},
    MessageInfo{MessageType::round_done, 1, "round done", 1 * kKiB, Sender::peer},
    MessageInfo{MessageType::round_failed, 1, "round failed", 4 * kKiB, Sender::peer},
    MessageInfo{MessageType::state_report, 1, "state report", 1 * kKiB, Sender::peer},
    MessageInfo{MessageType::misbehaviour_report, 1, "misbehaviour report", 4 * kKiB, Sender::peer},
    MessageInfo{MessageType::join_reply, 1, "join reply", 16 * kKiB, Sender::tracker},
    MessageInfo{MessageType::heartbeat_ack, 1, "heartbeat ack", 1 * kKiB, Sender::tracker},
    MessageInfo{MessageType::view, 1, "membership view", 2 * kMiB, Sender::tracker},
    MessageInfo{MessageType::group, 1, "round group", 1 * kMiB, Sender::tracker},
    MessageInfo{MessageType::commit, 1, "commit", 1 * kKiB, Sender::tracker},
    MessageInfo{MessageType::abort_round, 1, "round abort", 4 * kKiB, Sender::tracker},
    MessageInfo{MessageType::resync, 1, "resync", 64 * kKiB, Sender::tracker},
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

}  // namespace loco::proto
