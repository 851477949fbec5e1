#pragma once
// The link quantities moved to the sans-I/O link module (link/units.hpp), which net/ and sim/
// share; these names stay for the callers written against net/.

#include "loco/link/units.hpp"

namespace loco::net {
using link::BitRate;
using link::format_bandwidth;
using link::format_duration;
using link::kMaxBitRate;
using link::kMinBitRate;
using link::kUnlimited;
using link::parse_bandwidth;
using link::parse_byte_count;
using link::parse_duration;
}  // namespace loco::net
