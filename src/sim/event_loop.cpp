#include "loco/sim/event_loop.hpp"

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"

namespace loco::sim {

void EventLoop::at(TimePoint at, Action action) {
  LOCO_ASSERT(at >= now_, "an event scheduled in the past");
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(actions_.size());
    actions_.push_back(std::move(action));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    actions_[slot] = std::move(action);
  }
  queue_.push(Entry{at, seq_++, slot});
}

bool EventLoop::run_until(TimePoint until, std::uint64_t max_events) {
  for (std::uint64_t n = 0; !queue_.empty() && queue_.top().at <= until; ++n) {
    if (n == max_events) return false;
    const Entry next = queue_.top();
    queue_.pop();
    now_ = next.at;
    Action action = std::move(actions_[next.slot]);
    free_slots_.push_back(next.slot);
    ++events_run_;
    action();
    if (after_each_) after_each_();
  }
  now_ = std::max(now_, until);
  return true;
}

void EventLoop::record(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  trace_ = mix64(
      trace_ ^
      mix64(a ^ mix64(b ^ mix64(c ^ static_cast<std::uint64_t>(now_.time_since_epoch().count())))));
}

}  // namespace loco::sim
