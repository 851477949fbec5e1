#include "loco/swarm/swarm_events.hpp"

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

}  // namespace loco::swarm
