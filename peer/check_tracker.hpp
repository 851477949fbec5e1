#pragma once
// `loco-peer check-tracker`: connects to the tracker named in the peer's config, checks that it
// holds the pinned identity key and belongs to the same run (the handshake fails otherwise), and
// reports. A volunteer runs it once after setting up the config, before joining. With a list of
// replicas' addresses it tries each in turn and says which answered (the leader: a follower does
// not listen, so its "no answer" is expected).

#include <string>

namespace loco::peer {

// What a peer needs to reach its tracker: `[peer] key`, `[run] id`, `[tracker] address` and
// `[tracker] public-key` in the config (or the same as --section.name flags).
struct TrackerLinkOptions {
  std::string key_file;
  std::string run_id;
  std::string tracker_address;
  std::string tracker_public_key;  // 64 hex digits, printed by `loco-tracker keygen`
};

// Prints "tracker ID at ADDRESS: pinned identity verified for run RUN (handshake N ms)" and
// returns 0, or logs why not and returns 1. With replicas: that line (ending ": it leads") for
// the one that answers, "no answer at ADDRESS (...): expected of a follower replica, ..." for each
// other, then "N replicas: ADDRESS leads, ..." and 0; 1 when none answers, more than one does, or
// an address shows another key or run.
int check_tracker(const TrackerLinkOptions& options);

}  // namespace loco::peer
