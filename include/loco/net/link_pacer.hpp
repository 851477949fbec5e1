#pragma once
// The pacer interface moved to the sans-I/O link module (link/pacer.hpp), which net/ and sim/
// share; this name stays for the callers written against net/.

#include "loco/link/pacer.hpp"

namespace loco::net {
using link::LinkPacer;
}  // namespace loco::net
