// What the tracker does with a member's proof that others broke a round's collective
// (owner_check.hpp). Unlike an accusation, a proof is checked with the members' keys alone, so it
// is taken as a fact: those it shows at fault sit the retry out, and a member that signed two
// different contributions to one segment (it alone can have done that) is cut off. A proof that
// proves nothing is its sender's misbehaviour.
#include <fmt/format.h>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

void TrackerCore::handle_proven_misconduct(TimePoint now, const PeerKey& from,
                                           const ProvenMisconduct& m) {
  const Statement& claim = m.proof.first;
  if (claim.round != next_round()) return;  // a round already over
  const bool running = attempt_ && claim.attempt == attempt_->number;
  const bool stopped = pending_retry_ && claim.attempt == pending_retry_->attempt;
  if (!running && !stopped) return;  // an attempt already over
  const std::vector<PeerKey>& members = running ? attempt_->members : pending_retry_->members;
  if (std::find(members.begin(), members.end(), from) == members.end()) return;
  const std::set<PeerKey> at_fault = proven_at_fault(config_.run_id, m.proof, members);
  if (at_fault.empty()) {
    misbehaved(now, from,
               fmt::format("sent a proof of misconduct in round {} attempt {} that proves nothing",
                           claim.round, claim.attempt),
               false);
    return;
  }
  const bool equivocation = claim.kind == StatementKind::contribution;
  const std::string what =
      equivocation
          ? fmt::format("{} signed two different contributions to segment {} (proof from {})",
                        secure::short_id(claim.signer), claim.segment, secure::short_id(from))
          : fmt::format("the owner {} and the checker {} of segment {} signed different means "
                        "(proof from {}): both sit the retry out",
                        secure::short_id(m.proof.first.signer),
                        secure::short_id(m.proof.second.signer), claim.segment,
                        secure::short_id(from));
  if (equivocation)
    misbehaved(now, claim.signer, fmt::format("round {}: {}", claim.round, what), true);
  if (stopped && pending_retry_) {
    pending_retry_->proven.insert(at_fault.begin(), at_fault.end());
    return;
  }
  // Cutting an equivocator off may have ended the attempt already.
  if (attempt_ && attempt_->number == claim.attempt)
    abort_attempt(now, fmt::format("round {}: {}", claim.round, what), at_fault);
}

}  // namespace loco::proto
