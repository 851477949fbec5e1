#include "send_queue.hpp"

#include "loco/core/assert.hpp"

namespace loco::tracker {

struct SendQueue::Hold {
  std::weak_ptr<Budget> budget;
  std::size_t bytes;
  bool counted = true;  // false once its time ran out: its bytes were given back then

  Hold(std::weak_ptr<Budget> b, std::size_t n) : budget(std::move(b)), bytes(n) {}
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  ~Hold() {
    if (counted) give_back();
  }
  void give_back() {
    counted = false;
    const auto b = budget.lock();
    if (b == nullptr) return;  // the queue is gone
    b->in_flight -= bytes;
    if (b->on_release) b->on_release();
  }
};

SendQueue::SendQueue(std::size_t budget_bytes, Duration hold_limit,
                     std::function<void()> on_release)
    : budget_(std::make_shared<Budget>(
          Budget{.limit = budget_bytes, .in_flight = 0, .on_release = std::move(on_release)})),
      hold_limit_(hold_limit) {
  LOCO_ASSERT(budget_bytes > 0, "a send budget of zero bytes would send nothing");
  LOCO_ASSERT(hold_limit > Duration::zero(), "a hold limit of zero would count nothing");
}

bool SendQueue::is_reply(proto::MessageType type) {
  return type == proto::MessageType::heartbeat_ack || type == proto::MessageType::join_reply;
}

void SendQueue::push(proto::Transmit transmit) {
  Waiting& waiting = waiting_[transmit.to];
  ++(is_reply(transmit.type) ? waiting.replies : waiting.ordered);
  (is_reply(transmit.type) ? replies_ : ordered_).push_back(std::move(transmit));
}

proto::Transmit SendQueue::take_front(std::deque<proto::Transmit>& from) {
  proto::Transmit transmit = std::move(from.front());
  from.pop_front();
  const auto it = waiting_.find(transmit.to);
  --(is_reply(transmit.type) ? it->second.replies : it->second.ordered);
  if (it->second.replies == 0 && it->second.ordered == 0) waiting_.erase(it);
  return transmit;
}

void SendQueue::drop(const proto::PeerKey& key) {
  const auto it = waiting_.find(key);
  if (it == waiting_.end() || it->second.ordered == 0) return;
  std::erase_if(ordered_, [&](const proto::Transmit& t) { return t.to == key; });
  it->second.ordered = 0;
  if (it->second.replies == 0) waiting_.erase(it);
}

bool SendQueue::ready(TimePoint now) {
  expire(now);
  return !replies_.empty() || (!ordered_.empty() && budget_->in_flight < budget_->limit);
}

std::optional<SendQueue::Out> SendQueue::pop(TimePoint now) {
  if (!replies_.empty()) return Out{.transmit = take_front(replies_), .hold = nullptr};
  if (!ready(now)) return std::nullopt;
  Out out{.transmit = take_front(ordered_), .hold = nullptr};
  const std::size_t bytes = out.transmit.body != nullptr ? out.transmit.body->size() : 0;
  budget_->in_flight += bytes;
  auto hold = std::make_shared<Hold>(budget_, bytes);
  issued_.push_back(Issued{.expires = now + hold_limit_, .hold = hold});
  out.hold = std::move(hold);
  return out;
}

void SendQueue::expire(TimePoint now) {
  while (!issued_.empty() && (issued_.front().hold.expired() || issued_.front().expires <= now)) {
    if (const auto hold = issued_.front().hold.lock(); hold != nullptr && hold->counted)
      hold->give_back();
    issued_.pop_front();
  }
}

TimePoint SendQueue::next_expiry() const {
  if (ordered_.empty()) return kNever;
  for (const Issued& issued : issued_)
    if (const auto hold = issued.hold.lock(); hold != nullptr && hold->counted)
      return issued.expires;
  return kNever;
}

void SendQueue::clear() {
  replies_.clear();
  ordered_.clear();
  waiting_.clear();
}

}  // namespace loco::tracker
