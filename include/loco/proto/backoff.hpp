#pragma once
// A retry delay that doubles from `first` up to `max`, and starts over once a try succeeds: the
// tracker connection's reconnects (net/tracker_link.hpp, the simulator's peers) and a peer's
// requests for new donors after a failed fetch (peer_core.hpp).

#include <algorithm>

#include "loco/core/time.hpp"

namespace loco::proto {

class Backoff {
 public:
  constexpr Backoff(Duration first, Duration max) : first_(first), max_(max), next_(first) {}

  // The delay before this try; the next one waits twice as long, up to the maximum.
  Duration next() {
    const Duration now = next_;
    next_ = std::min(2 * next_, max_);
    return now;
  }
  void reset() { next_ = first_; }

  // After a lost tracker connection: 0.5 s doubling to 10 s.
  static constexpr Backoff tracker_reconnect() {
    return {std::chrono::milliseconds(500), std::chrono::seconds(10)};
  }

 private:
  Duration first_;
  Duration max_;
  Duration next_;
};

}  // namespace loco::proto
