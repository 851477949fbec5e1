#pragma once
// WAN link emulation moved to the sans-I/O link module (link/shaper.hpp), which net/ and sim/
// share, so the emulated and the simulated link agree by construction; these names stay for the
// callers written against net/.

#include "loco/link/shaper.hpp"
#include "loco/net/link_pacer.hpp"
#include "loco/net/link_settings.hpp"
#include "loco/net/link_token_bucket.hpp"

namespace loco::net {
using link::LinkShaper;
}  // namespace loco::net
