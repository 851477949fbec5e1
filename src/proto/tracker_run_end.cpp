// TrackerCore at the end of a run (docs/TRACKER.md, "The end of a run"): the run's final round
// comes from its config (train/run_end.hpp), not from any member, so no member can end the run
// early, and the final state is the one its group committed by majority. Once it commits, no round
// forms after it; the tracker pulls its state for custody at once (custody_due) and tells each
// member that holds it when the copy is kept, so that the last members wait for it before they
// leave; and the run never goes back from the final round to an older state: a peer that comes
// later fetches the final state, from the tracker's copy or from a peer that kept it, and while
// nobody can hand it over a peer that does not hold it is refused with the reason.

#include <fmt/format.h>

#include <utility>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

bool TrackerCore::final_state_unkept() const {
  return run_over() && (config_.custody.every == 0 || custody_off_.has_value());
}

void TrackerCore::tell_run_ended(const PeerKey& peer) {
  const auto m = members_.find(peer);
  if (!run_over() || m == members_.end() || !in_sync(m->second)) return;
  const bool kept = custody_serves();
  if (kept || final_state_unkept())
    send(peer, RunEnded{.round = committed_round_, .state_hash = committed_hash_, .kept = kept});
}

void TrackerCore::tell_members_run_ended() {
  for (const auto& [key, m] : members_) tell_run_ended(key);
}

void TrackerCore::final_round_committed() {
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("round {} is the run's final round: the run is over{}", committed_round_,
                    final_state_unkept()
                        ? "; the tracker keeps no copy of its state (custody is off): the peers' "
                          "checkpoints hold the model"
                        : "; the tracker takes custody of its state"));
  tell_members_run_ended();
}

void TrackerCore::wait_for_the_final_state(TimePoint now) {
  reconcile_after_ = now + config_.eviction_timeout;  // look again then (or at the next join)
  if (std::exchange(final_state_missing_noted_, true)) return;
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("the run ended at round {} (state {}), and no live peer holds that state nor "
                    "does the tracker: waiting for a peer that kept it (a finished peer's "
                    "checkpoint); the run does not go back to an older state",
                    committed_round_, to_hex(committed_hash_).substr(0, 12)));
}

std::optional<std::string> TrackerCore::end_refusal(const JoinRequest& request) const {
  if (!run_over() || state_available() ||
      (request.state_round == committed_round_ && request.state_hash == committed_hash_) ||
      computed_committed(request))
    return std::nullopt;
  return fmt::format(
      "the run ended at round {} and no live peer holds its final state, nor does the tracker: try "
      "again later (a finished peer that kept it may come back)",
      committed_round_);
}

}  // namespace loco::proto
