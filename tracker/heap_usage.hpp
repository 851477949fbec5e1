#pragma once
// The bytes the process holds on its heap: what its allocations hold now, as the allocator counts
// them (glibc's malloc, or AddressSanitizer's when the build is sanitized). Unlike the resident
// size it does not count memory freed but kept by the allocator, nor AddressSanitizer's shadow
// and quarantine, so it is comparable across builds. Shown on /metrics.

#include <cstdint>

namespace loco::tracker {

std::uint64_t heap_in_use_bytes();

}  // namespace loco::tracker
