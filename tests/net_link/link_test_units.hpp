#pragma once
// Sizes, rates and the time origin the link tests share.

#include <chrono>
#include <cstdint>

#include "loco/core/time.hpp"
#include "loco/net/units.hpp"

namespace loco::net::test_units {

inline constexpr std::uint64_t kKiB = 1024;
inline constexpr std::uint64_t kMiB = 1024 * kKiB;
inline constexpr BitRate k100Mbit = 100'000'000;
// Far from zero, so that a computation that goes below the origin shows.
inline const TimePoint t0 = TimePoint(std::chrono::seconds(1000));

}  // namespace loco::net::test_units
