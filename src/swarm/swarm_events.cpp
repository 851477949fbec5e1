#include "loco/swarm/swarm_events.hpp"

#include <algorithm>

namespace loco::swarm {

void Mailbox::post(SwarmEvent event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

std::optional<SwarmEvent> Mailbox::wait(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
  SwarmEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool Mailbox::holds(SwarmEvent::Kind kind, std::uint64_t round) const {
  std::lock_guard lock(mutex_);
  return std::ranges::any_of(
      events_, [&](const SwarmEvent& e) { return e.kind == kind && e.round == round; });
}

}  // namespace loco::swarm
