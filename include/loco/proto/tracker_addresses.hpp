#pragma once
// A peer's walk over the tracker's addresses (one, or each replica's, of which only the leader
// listens: docs/TRACKER.md, "Running replicas"), for loco-peer's tracker link
// (net/tracker_link.hpp) and the simulator's peers (sim/peer_node.hpp) alike: after a lost or
// failed connection, the next address almost at once; after a whole pass that reached nobody, the
// backoff's pause, at most kMaxPassPause with several addresses (a new leader listens about a
// lease after the old one died, and a peer that backed off for longer would only add to the
// failover; a follower refuses a connection at no cost).

#include <algorithm>
#include <cstddef>

#include "loco/core/time.hpp"
#include "loco/proto/backoff.hpp"

namespace loco::proto {

class TrackerAddresses {
 public:
  static constexpr Duration kNextPause = std::chrono::milliseconds(100);
  static constexpr Duration kMaxPassPause = std::chrono::seconds(1);

  explicit TrackerAddresses(std::size_t count) : count_(std::max<std::size_t>(count, 1)) {}

  std::size_t current() const { return current_; }  // the address to connect to
  std::size_t count() const { return count_; }
  // The connection to current() came up.
  void connected() {
    backoff_.reset();
    tried_ = 0;
  }
  // It was lost or never came up: moves on to the next address, and says how long to wait.
  Duration next() {
    current_ = (current_ + 1) % count_;
    if (++tried_ % count_ != 0) return kNextPause;
    return count_ == 1 ? backoff_.next() : std::min(backoff_.next(), kMaxPassPause);
  }

 private:
  std::size_t count_;
  std::size_t current_ = 0;
  std::size_t tried_ = 0;  // attempts since the last connection that came up
  Backoff backoff_ = Backoff::tracker_reconnect();
};

}  // namespace loco::proto
