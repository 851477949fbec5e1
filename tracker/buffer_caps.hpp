#pragma once
// What one connection may make the tracker hold (TrackerService), and for how long it may stay
// without joining.

#include <chrono>
#include <cstdint>

#include "loco/core/time.hpp"

namespace loco::tracker {

struct BufferCaps {
  std::uint64_t joining = std::uint64_t{64} << 10;    // bytes, before its peer joined
  std::uint64_t member = std::uint64_t{16} << 10;     // bytes, once it has
  Duration join_deadline = std::chrono::seconds(10);  // admitted to joined, at most
};

}  // namespace loco::tracker
