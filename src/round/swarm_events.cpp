#include "loco/round/swarm_events.hpp"

#include <algorithm>

namespace loco::round {

void Mailbox::post(SwarmEvent event) {
  {
    std::lock_guard lock(mutex_);
    if (event.kind == SwarmEvent::Kind::run_ended) {
      run_ended_ = std::move(event);
      ready_.notify_all();
      return;
    }
    // A fetched state supersedes one the compute thread has not taken yet: loading the older
    // would report a state the run has left, and the resync that follows would queue another
    // fetch behind it, for ever on a compute thread slower than the fetches.
    if (event.kind == SwarmEvent::Kind::fetched)
      std::erase_if(events_,
                    [](const SwarmEvent& e) { return e.kind == SwarmEvent::Kind::fetched; });
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

std::optional<SwarmEvent> Mailbox::wait_run_ended(Duration timeout) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return run_ended_.has_value(); })) return std::nullopt;
  return run_ended_;
}

bool Mailbox::holds(const std::function<bool(const SwarmEvent&)>& which) const {
  std::lock_guard lock(mutex_);
  return std::ranges::any_of(events_, which);
}

bool Mailbox::empty() const {
  std::lock_guard lock(mutex_);
  return events_.empty();
}

}  // namespace loco::round
