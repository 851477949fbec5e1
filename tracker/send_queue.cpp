#include "send_queue.hpp"

#include "loco/core/assert.hpp"

namespace loco::tracker {

struct SendQueue::Hold {
  std::weak_ptr<Budget> budget;
  std::size_t bytes;

  Hold(std::weak_ptr<Budget> b, std::size_t n) : budget(std::move(b)), bytes(n) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() {
    const auto b = budget.lock();
    if (b == nullptr) return;  // the queue is gone
    b->in_flight -= bytes;
    if (b->on_release) b->on_release();
  }
};

SendQueue::SendQueue(std::size_t budget_bytes, std::function<void()> on_release)
    : budget_(std::make_shared<Budget>(
          Budget{.limit = budget_bytes, .in_flight = 0, .on_release = std::move(on_release)})) {
  LOCO_ASSERT(budget_bytes > 0, "a send budget of zero bytes would send nothing");
}

bool SendQueue::is_reply(proto::MessageType type) {
  return type == proto::MessageType::heartbeat_ack || type == proto::MessageType::join_reply;
}

void SendQueue::push(proto::Transmit transmit) {
  (is_reply(transmit.type) ? replies_ : ordered_).push_back(std::move(transmit));
}

bool SendQueue::ready() const {
  return !replies_.empty() || (!ordered_.empty() && budget_->in_flight < budget_->limit);
}

std::optional<SendQueue::Out> SendQueue::pop() {
  if (!replies_.empty()) {
    Out out{.transmit = std::move(replies_.front()), .hold = nullptr};
    replies_.pop_front();
    return out;
  }
  if (!ready()) return std::nullopt;
  Out out{.transmit = std::move(ordered_.front()), .hold = nullptr};
  ordered_.pop_front();
  const std::size_t bytes = out.transmit.body != nullptr ? out.transmit.body->size() : 0;
  budget_->in_flight += bytes;
  out.hold = std::make_shared<const Hold>(budget_, bytes);
  return out;
}

void SendQueue::clear() {
  replies_.clear();
  ordered_.clear();
}

}  // namespace loco::tracker
