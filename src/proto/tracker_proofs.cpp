// What the tracker does with a member's proof that others broke a round's collective
// (owner_check.hpp). Unlike an accusation, a proof is checked with the members' keys alone, so it
// is taken as a fact. A proof that proves nothing is its sender's misbehaviour.
//
// A member that signed two different contributions to one segment (it alone can have done that)
// is cut off. An owner and a checker whose signed means differ are a pair of which one lied. In a
// group of three or more a judge decides which (tracker_judging.cpp): the retry has both, apart,
// and the verdict benches the liar. Where no verdict decides, the counting rule below does, at the
// judge's grace's end; in a group of two, at once. The tracker remembers each member's partners in
// such disputes for the whole run (every valid dispute has a liar in it), and:
//   - a dispute between two members with no earlier partner: the retry has everyone, in an order
//     where the two are not neighbours (neither checks the other; keep_disputed_apart, which also
//     keeps them apart in later rounds), so that a liar that lies again does it with a new partner;
//   - in a group of three or more, each of the two that disputed before (with anyone, this partner
//     too: once a liar has disputed with every honest member no order keeps it apart) sits the
//     retry out and is benched as an unconfirmed accuser is;
//   - a group of two is one word against the other and nobody else saw the segment: the dispute
//     is recorded, both sit the retry out, and neither is benched; so is a group of three with no
//     conviction (every two members are neighbours).
// Each lie of a liar after its first benches it, for twice as long each time, so a liar that lies
// every round costs retries less and less often; the honest member it lied against is benched too
// when it disputed before (at most once for each lie told against it but the first). Benches never
// stop the run (tracker_rounds.cpp: the benched are not counted when a group forms, a bench counts
// round attempts, and too few unbenched members let every bench end).
#include <fmt/format.h>

#include <algorithm>

#include "loco/core/byte_io.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::proto {
namespace {

bool neighbours(const std::vector<PeerKey>& order, const PeerKey& a, const PeerKey& b) {
  const std::size_t n = order.size();
  const auto at = [&](const PeerKey& k) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), k) - order.begin());
  };
  const std::size_t i = at(a), j = at(b);
  return (i + 1) % n == j || (j + 1) % n == i;
}

// Moves b to the first place where it is no neighbour of a (a group of four or more has one).
void separate(std::vector<PeerKey>& order, const PeerKey& a, const PeerKey& b) {
  if (!neighbours(order, a, b)) return;
  order.erase(std::find(order.begin(), order.end(), b));
  for (std::size_t at = 0; at <= order.size(); ++at) {
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(at), b);
    if (!neighbours(order, a, b)) return;
    order.erase(order.begin() + static_cast<std::ptrdiff_t>(at));
  }
  order.push_back(b);  // three or fewer: no such place (the caller left both out)
}

}  // namespace

// Each member a dispute benched, named (both, when both disputed with other partners before).
std::string TrackerCore::convicted_text(const std::set<PeerKey>& convicted) const {
  std::string out;
  for (const PeerKey& k : convicted) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} disputed with another partner before: it sits the retry out",
                       secure::short_id(k));
    if (benched(k)) out += fmt::format(" and the run's next {} round attempt(s)", bench_left(k));
  }
  return out;
}

void TrackerCore::order_unsteerably(std::vector<PeerKey>& group) const {
  ByteWriter w;
  w.string("loco checked group order v1");
  w.string(config_.run_id);
  w.u64(next_round());
  w.u32(last_attempt_number_ + 1);
  const std::vector<std::byte> bytes = w.finish();
  const secure::Signature seed =
      identity_.sign({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  std::vector<std::pair<Digest, PeerKey>> keyed;
  for (const PeerKey& k : group)
    keyed.emplace_back(Blake2b()
                           .update(std::as_bytes(std::span(seed)))
                           .update(std::as_bytes(std::span(k.bytes)))
                           .finish(),
                       k);
  std::sort(keyed.begin(), keyed.end());
  for (std::size_t i = 0; i < group.size(); ++i) group[i] = keyed[i].second;
}

void TrackerCore::keep_disputed_apart(std::vector<PeerKey>& ring) const {
  if (ring.size() <= 3) return;
  const auto in_ring = [&](const PeerKey& k) {
    return std::find(ring.begin(), ring.end(), k) != ring.end();
  };
  for (const auto& [a, partners] : disputes_)
    for (const PeerKey& b : partners)
      if (a < b && in_ring(a) && in_ring(b)) separate(ring, a, b);
}

void TrackerCore::forget_disputes_of_gone_members() {
  std::erase_if(disputes_, [&](const auto& entry) { return !members_.contains(entry.first); });
  while (disputes_.size() + 2 > kMaxBarred) disputes_.erase(disputes_.begin());
}

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
  std::set<PeerKey> excluded;
  std::string what;
  if (claim.kind == StatementKind::contribution) {
    excluded = at_fault;
    what = fmt::format("{} signed two different contributions to segment {} (proof from {})",
                       secure::short_id(claim.signer), claim.segment, secure::short_id(from));
    misbehaved(now, claim.signer, fmt::format("round {}: {}", claim.round, what), true);
  } else {
    if (!disputed_segments_.insert({claim.attempt, claim.segment}).second) return;  // a copy
    const PeerKey& a = m.proof.first.signer;
    const PeerKey& b = m.proof.second.signer;
    if (disputes_.size() + 2 > kMaxBarred) forget_disputes_of_gone_members();
    std::set<PeerKey>& of_a = disputes_[a];
    std::set<PeerKey>& of_b = disputes_[b];
    // In a group of two nobody else saw the segment: the dispute is recorded, and convicts no one.
    // Elsewhere each of the two that disputed before (with this partner too: a pair no order keeps
    // apart) is convicted, so that a liar's every lie after its first benches it.
    const bool judged = members.size() > 2;
    std::set<PeerKey> convicted;
    if (!of_a.empty() && judged) convicted.insert(a);
    if (!of_b.empty() && judged) convicted.insert(b);
    // A party already benched (a verdict convicted it earlier in the round, while it was in the
    // attempt), or whose dispute of this round is still being judged, sits the retry out (not
    // benched for this one): a liar cannot lie in every retry while its verdict is on its way.
    std::set<PeerKey> waiting;
    for (const PeerKey& k : {a, b})
      if (benched(k) || awaits_verdict(claim.round, k)) waiting.insert(k);
    of_a.insert(b);
    of_b.insert(a);
    // Where a third member can judge, the evidence decides (tracker_judging.cpp), and the counting
    // rule only if the judge does not.
    const std::optional<PeerKey> judge =
        judged ? call_judge(now, m.proof, members, convicted) : std::nullopt;
    if (judge) convicted.clear();
    excluded = convicted;
    excluded.insert(waiting.begin(), waiting.end());
    if (excluded.empty() && members.size() <= 3) excluded = {a, b};  // no order parts them
    for (const PeerKey& k : convicted) bench(k);
    if (!judged) note_unjudged(a, b);
    const std::string judging =
        judge ? fmt::format("; {} judges the segment", secure::short_id(*judge)) : std::string();
    what = fmt::format(
        "the owner and the checker of segment {}, {} and {}, signed different means (proof "
        "from {}): {}{}",
        claim.segment, secure::short_id(a), secure::short_id(b), secure::short_id(from),
        excluded.empty()     ? std::string("the retry has both, no longer neighbours")
        : !convicted.empty() ? convicted_text(convicted)
        : waiting.empty()    ? std::string("both sit the retry out")
                             : std::string("a party already benched or still judged sits the "
                                              "retry out"),
        judging);
  }
  if (stopped && pending_retry_) {
    event(TrackerEvent::Kind::notice, std::nullopt, fmt::format("round {}: {}", claim.round, what));
    pending_retry_->proven.insert(excluded.begin(), excluded.end());
    return;
  }
  // Cutting an equivocator off may have ended the attempt already.
  if (attempt_ && attempt_->number == claim.attempt)
    abort_attempt(now, fmt::format("round {}: {}", claim.round, what), excluded);
}

}  // namespace loco::proto
