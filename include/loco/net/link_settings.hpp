#pragma once
// The link settings moved to the sans-I/O link module (link/settings.hpp), which net/ and sim/
// share; these names stay for the callers written against net/.

#include "loco/link/settings.hpp"
#include "loco/net/units.hpp"

namespace loco::net {
using link::describe;
using link::kMaxFaultTime;
using link::kMaxLatency;
using link::kMinStreamWindow;
using link::LinkFaults;
using link::LinkSettings;
using link::validate;
}  // namespace loco::net
