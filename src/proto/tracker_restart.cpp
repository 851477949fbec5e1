// TrackerCore after a restart from its state file: the members of its last saved view reconnect
// over the next second or two, and no round forms until they are back or restart_grace has
// passed, so that the first one back does not train a round alone (the others would throw their
// phase away and fetch its state).

#include <fmt/format.h>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

void TrackerCore::await_last_view(TimePoint now, const TrackerSnapshot& restored) {
  if (config_.restart_grace <= Duration::zero() || restored.members.empty()) return;
  awaited_.insert(restored.members.begin(), restored.members.end());
  awaited_at_restart_ = awaited_.size();
  awaited_until_ = now + config_.restart_grace;
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("restarted: no round forms until the {} members of the last saved view are "
                    "back, or for {} s at most",
                    awaited_at_restart_,
                    std::chrono::duration<double>(config_.restart_grace).count()));
}

void TrackerCore::rejoined_after_restart(const PeerKey& peer) {
  if (awaited_.erase(peer) == 0 || !awaited_.empty()) return;
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("all {} members of the last saved view are back: rounds form",
                    awaited_at_restart_));
}

void TrackerCore::restart_grace_timer(TimePoint now) {
  if (awaited_.empty() || now < awaited_until_) return;
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("{} of the {} members of the last saved view are back after {} s: rounds form "
                    "with the members here",
                    awaited_at_restart_ - awaited_.size(), awaited_at_restart_,
                    std::chrono::duration<double>(config_.restart_grace).count()));
  awaited_.clear();
}

}  // namespace loco::proto
