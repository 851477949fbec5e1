#pragma once
// Rounds paced by the tracker (strategy.tracker-paced, docs/STRATEGIES.md "Rounds bounded by
// time"): each member says how long its inner steps took (Ready::step_seconds, a claim), and the
// tracker sets the next inner phase to H × the median member's step time, so that the median
// member takes H steps, faster ones more and slower ones fewer. The median of N claims moves only
// if more than half of them lie, and the result is clamped, so a member can neither stall the run
// with a huge claim nor spin it with a tiny one.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>

#include "loco/core/time.hpp"

namespace loco::proto {

// A member still training this share of a round's phase after the first is ready is not waited
// for (TrackerCoreConfig::straggler_wait; with pacing, of the phase the tracker set).
inline constexpr double kStragglerShare = 0.25;

struct RoundPacing {
  std::uint64_t steps = 0;  // H, the median member's steps a phase; 0: the tracker sets no phase
  Duration first{};         // the phase before anyone has measured a step; 0: H steps of each's own
  Duration shortest = std::chrono::milliseconds(50);
  Duration longest = std::chrono::minutes(10);
  bool on() const { return steps != 0; }
};

// steps × the lower median of the positive `step_seconds`, within [shortest, longest]; with no
// positive one, `first` (nothing when that is 0). Nothing when pacing is off.
std::optional<Duration> paced_phase(std::span<const float> step_seconds, const RoundPacing& pacing);

}  // namespace loco::proto
