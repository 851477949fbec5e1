#pragma once
// What one event of the network side does to the round a peer is in: the rule the compute
// thread's SwarmGroup (swarm_group.hpp) and the simulator's modelled peer
// (sim/modelled_process.hpp) both follow, so that what a mean, a commit, an abort or a fetched
// state does to a peer is decided here only. The caller does the step with its own state: a
// strategy's shared state, or the modelled peer's θ ‖ v.

#include <cstdint>

#include "loco/core/hash.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/round/swarm_events.hpp"

namespace loco::round {

enum class RoundStep {
  wait,      // nothing to do: an event of another round (stale), a fetch under way, a join
  mean,      // the collective's mean is in: compute the state it leads to and report its hash
             // (round_done), unless the network side reports it (`reported`)
  reported,  // the network side reported the tentative state's hash (`hash`, `manifest`)
  install,   // committed with the hash this peer reported: install that state and serve it
  resync,    // committed with another state: this peer's differs from the majority's, and the
             // tracker's resync follows (a fetch)
  retry,     // aborted, and the survivors' group runs again from this peer's update
  skip,      // aborted with no retry: train on, try again at the next round
  load,      // the run's state fetched (no bytes: the state this peer holds kept): load it,
             // report it and serve it, whichever round was under way (replaced)
};

// `round`: the round this peer is in (0: none); `mine`: the hash it reported for that round's
// latest attempt (none yet: zero, which no commit carries).
RoundStep round_step(const SwarmEvent& e, std::uint64_t round, const Digest& mine);

// Whether the tracker's answer to a join leaves this peer on the state it holds (round `round`,
// hash `hash`): the run is at that state, or the run is in gossip mode, which commits nothing to
// match (a peer far behind is told to copy a neighbour: a resync). Else a fetch follows.
bool joined_at_held(const proto::JoinReply& reply, bool gossip, std::uint64_t round,
                    const Digest& hash);

}  // namespace loco::round
