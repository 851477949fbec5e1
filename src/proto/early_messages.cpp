#include "loco/proto/early_messages.hpp"

namespace loco::proto {

bool EarlyMessages::keep(Id id, const PeerKey& from, MessageType type,
                         std::span<const std::byte> body) {
  if (waiting_.size() >= capacity_) return false;
  waiting_.push_back(Message{id, from, type, std::vector<std::byte>(body.begin(), body.end())});
  return true;
}

std::vector<EarlyMessages::Message> EarlyMessages::take(Id current) {
  std::vector<Message> now, later;
  for (Message& m : waiting_) {
    if (m.id == current)
      now.push_back(std::move(m));
    else if (m.id > current)
      later.push_back(std::move(m));
  }
  waiting_ = std::move(later);
  return now;
}

}  // namespace loco::proto
