#pragma once
// loco-tracker's service: the tracker of one training run (proto/tracker_core.hpp driven by
// tracker_service.hpp over the network), started from its options, until SIGINT or SIGTERM.

#include "tracker_options.hpp"

namespace loco::tracker {

// Prints "listening on ADDRESS as PUBLIC-KEY" on stdout once ready. Returns the process exit
// code; a bad option, key file or state file is logged and gives 1.
int serve(const TrackerOptions& options);

}  // namespace loco::tracker
