#include "loco/round/round_step.hpp"

namespace loco::round {

RoundStep round_step(const SwarmEvent& e, std::uint64_t round, const Digest& mine) {
  using Kind = SwarmEvent::Kind;
  if (e.kind == Kind::fetched) return RoundStep::load;
  if (round == 0 || e.round != round) return RoundStep::wait;  // stale
  switch (e.kind) {
    case Kind::mean: return RoundStep::mean;
    case Kind::reported: return RoundStep::reported;
    case Kind::committed: return e.hash == mine ? RoundStep::install : RoundStep::resync;
    case Kind::aborted: return e.retry ? RoundStep::retry : RoundStep::skip;
    default: return RoundStep::wait;  // must_fetch, joined again: the outcome is still to come
  }
}

bool joined_at_held(const proto::JoinReply& reply, bool gossip, std::uint64_t round,
                    const Digest& hash) {
  return gossip || (reply.committed_round == round && reply.committed_hash == hash);
}

}  // namespace loco::round
