#pragma once
// The invariant "every committed round is held by the tracker or a live member until a later
// round is" (issue 49), checked after every event of a run (EventLoop::set_after_each).
//
// The run's state is the tracker's committed round and state hash, as its node last saved them
// (also while the tracker is down). It is held by the tracker when the newest custody copy on the
// tracker's disk is that state, and by a peer whose process is up and still in the run (not told
// to leave, its training not over) when it installed or fetched that state, or reported that hash
// done for that round and waits for the commit. In gossip mode, which commits nothing, the run's
// state is the newest round a peer in the run applied, held by a live peer at that round or past
// it (what a peer applies after it was told to leave is no longer the run's).
//
// A fault can destroy the last copy (the simulator's crashes, vanished hosts and restarts without
// a checkpoint, and a clean leave, which stands for an operator's stop): that is counted as lost to
// a fault, not a violation. A copy is lost to a fault when the last peers seen holding it (or
// about to hold it) were stopped by the Swarm since. Any other way to lose it is a violation,
// recorded in the Ledger with the round, the state and the virtual time: a member that finished
// its training and left with the only copy, one that dropped it for another state, or a commit of
// a state that no live member holds.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/core/time.hpp"

namespace loco::sim {

class Swarm;

class HoldingCheck {
 public:
  void check(Swarm& swarm);
  // Losses of the run's state to faults (each counted once, when it is first seen unheld).
  std::uint64_t lost_to_faults() const { return lost_to_faults_; }

 private:
  using Held = std::pair<std::uint64_t, Digest>;  // round, state hash (gossip: zero)
  struct Seen {
    std::uint64_t stops = 0;  // Swarm::stops(i) when it was seen
    Held held{};
    Held reported{};
  };
  // Notes what each peer stopped since it was last seen held, and what every live one holds now.
  void see_peers(Swarm& swarm);
  Held run_state(Swarm& swarm) const;

  std::vector<Seen> seen_;
  // States whose last holders were stopped by a fault, none holding them since.
  std::set<Held> lost_by_fault_;
  Held target_{};
  std::uint64_t gossip_newest_ = 0;  // gossip mode: the newest round a peer in the run held
  bool unheld_ = false;              // target_'s loss was seen (reported once)
  std::uint64_t lost_to_faults_ = 0;
};

}  // namespace loco::sim
