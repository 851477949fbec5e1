#pragma once
// The token bucket moved to the sans-I/O link module (link/token_bucket.hpp), which net/ and sim/
// share; this name stays for the callers written against net/.

#include "loco/link/token_bucket.hpp"
#include "loco/net/units.hpp"

namespace loco::net {
using link::TokenBucket;
}  // namespace loco::net
