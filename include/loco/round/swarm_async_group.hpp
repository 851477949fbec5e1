#pragma once
// Streaming DiLoCo's asynchronous group over the swarm: a train::AsyncOuterGroup on top of a
// SwarmGroup (swarm_group.hpp), whose network thread runs the rounds.
//
// Fragment rounds are the tracker's rounds: the shared state's round counts landed fragment
// rounds, so the round of a fragment sent with the state at round r is r + 1, formed, ring
// all-reduced (with the run's fragment codec), committed or aborted and retried with the
// survivors like a DiLoCo round; a failed fragment round retries that fragment alone, since it
// is the only one in flight (τ < H/P). Every member reports the hash of the whole shared state
// after each fragment round and the tracker commits the majority's, as for DiLoCo.
//
//   start_round  ──> begin_round: Δ_p and the landing's tentative to the network thread (ready
//                    for round r + 1); returns
//   (τ inner steps: the ring runs, then the network thread computes the tentative state's hash
//    and reports it: round done; the tracker commits once every member's is in)
//   finish_round ──> end_round: waits only if the commit is not in yet, then install
//
// One round at a time: Streaming without eager updates has one fragment in flight; eager
// updates keep a round in flight for a whole H and land it before the next one starts, so over
// the swarm they take P = 1 (loco-peer checks).
//
// A newcomer joins at a fragment-round boundary: it fetches the committed shared state (every
// fragment's θ_p and v_p, and eager's Δ̄) and the round, from which the strategy derives its
// place in the schedule. A round in flight is not part of the committed state: a newcomer that
// arrives meanwhile is resynced to its result when it commits.

#include <functional>

#include "loco/round/swarm_group.hpp"
#include "loco/train/async_outer_group.hpp"

namespace loco::round {

class SwarmAsyncGroup final : public train::AsyncOuterGroup {
 public:
  // `group` outlives this; it is bound to the strategy's shared state before the first round.
  explicit SwarmAsyncGroup(SwarmGroup& group) : group_(group) {}

  // The last committed round's group size (1 before any): only eager's proxy reads it, and only
  // for the local copy, so members need not agree on it.
  std::size_t members() const override { return members_; }
  Handle start_round(std::size_t fragment, std::span<const float> delta,
                     train::Landing landing) override;
  train::RoundResult finish_round(Handle handle) override;

  // A fragment round has started and its mean is not here yet.
  bool in_flight() const { return group_.round_in_flight(); }
  // finish_round would not wait for the network (the round's outcome is in).
  bool outcome_in() const { return group_.outcome_in(); }

 private:
  SwarmGroup& group_;
  std::function<void()> install_;  // of the round in flight
  std::size_t members_ = 1;
};

}  // namespace loco::round
