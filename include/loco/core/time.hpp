#pragma once
// Time as the sans-I/O cores see it. A core never reads a clock: its driver passes `now` in.
// The Asio driver (net/) maps std::chrono::steady_clock onto TimePoint; the simulator (sim/)
// passes virtual time. Both count nanoseconds from an arbitrary, driver-chosen epoch.

#include <chrono>

namespace loco {

// A clock type with no now(): it only gives TimePoint its own type, so that a steady_clock or
// system_clock time cannot be passed to a core by mistake.
struct DriverClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<DriverClock, duration>;
  static constexpr bool is_steady = true;
};

using Duration = std::chrono::nanoseconds;
using TimePoint = DriverClock::time_point;

// The farthest future: "never" for timers and releases.
inline constexpr TimePoint kNever = TimePoint::max();

// For the real-network driver: steady_clock time as a TimePoint.
inline TimePoint from_steady(std::chrono::steady_clock::time_point t) {
  return TimePoint(std::chrono::duration_cast<Duration>(t.time_since_epoch()));
}
// For the real-network driver: the steady clock's time now. Never called by a core.
inline TimePoint steady_now() {
  return from_steady(std::chrono::steady_clock::now());
}
inline std::chrono::steady_clock::time_point to_steady(TimePoint t) {
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(t.time_since_epoch()));
}

}  // namespace loco
