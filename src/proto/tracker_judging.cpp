// Disputes decided by evidence (docs/SECURITY.md, "Members lie"; segment_judge.hpp). When the
// owner and the checker of a segment sign different means in a group of three or more, the
// tracker names a judge among the others, unpredictably to the members (a hash of the tracker's
// signature over the run, round, attempt and segment picks it), and sends every member of the
// attempt a judge_call. The judge recomputes the segment from its members' signed contributions
// and signs the digest it found; then:
//   - it is the owner's and not the checker's (or the other way): the other one lied, and is
//     benched on this first lie; the honest one is cleared (the pair is no longer counted as
//     dispute partners: the liar's doubling bench remembers the lie);
//   - it is neither's: the judge is a third disputer. Its word convicts no one: the judge is
//     recorded as a dispute partner of both, and the counting rule (tracker_proofs.cpp) decides,
//     for the judge as for the two;
//   - undecided (a contributor's bytes did not come or did not match its signed digest, neither
//     list came, or a contributor signed two digests: that one is cut off), or no verdict within
//     judge_grace: the counting rule decides, as it did before judges, and never freezes the run.
// So a lying judge can only leave a dispute to the counting rule or side with the liar of the
// two: an honest member is convicted only when a liar is the judge of a liar's dispute with it,
// and the judge is drawn from the group after the lie, so liars cannot lie only where a friend
// judges.
#include <fmt/format.h>

#include <algorithm>

#include "loco/core/byte_io.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/segment_judge.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

std::optional<PeerKey> TrackerCore::call_judge(TimePoint now, const MisconductProof& proof,
                                               const std::vector<PeerKey>& members,
                                               std::set<PeerKey> by_counting) {
  const Statement& claim = proof.first;
  if (judgings_.size() >= kMaxJudgings || claim.segment >= members.size()) return std::nullopt;
  const PeerKey& owner = members[claim.segment];
  const PeerKey& checker = members[checker_of(claim.segment, members.size())];
  std::vector<PeerKey> others;
  for (const PeerKey& k : members)
    if (k != owner && k != checker && members_.contains(k)) others.push_back(k);
  if (others.empty()) return std::nullopt;
  ByteWriter w;
  w.string("loco dispute judge v1");
  w.string(config_.run_id);
  w.u64(claim.round);
  w.u32(claim.attempt);
  w.u32(claim.segment);
  const std::vector<std::byte> bytes = w.finish();
  const secure::Signature seed =
      identity_.sign({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
  const Digest pick = blake2b(std::as_bytes(std::span(seed)));
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < 8; ++i) at = at << 8 | pick[i];
  const bool owner_first = proof.first.signer == owner;
  Judging j{.call = JudgeCall{.round = claim.round,
                              .attempt = claim.attempt,
                              .segment = claim.segment,
                              .judge = others[at % others.size()],
                              .grace_ms = static_cast<std::uint32_t>(
                                  std::chrono::duration_cast<std::chrono::milliseconds>(
                                      config_.judge_grace * 3 / 4)
                                      .count()),
                              .owner_result = owner_first ? proof.first : proof.second,
                              .checker_result = owner_first ? proof.second : proof.first},
            .members = members,
            .by_counting = std::move(by_counting),
            .deadline = now + config_.judge_grace};
  for (const PeerKey& k : members)
    if (members_.contains(k)) send(k, j.call);
  judgings_.push_back(std::move(j));
  return judgings_.back().call.judge;
}

bool TrackerCore::awaits_verdict(std::uint64_t round, const PeerKey& peer) const {
  return std::any_of(judgings_.begin(), judgings_.end(), [&](const Judging& j) {
    return j.call.round == round &&
           (j.call.owner_result.signer == peer || j.call.checker_result.signer == peer);
  });
}

void TrackerCore::judge_by_counting(const Judging& j, const std::string& why) {
  std::string benched_text;
  for (const PeerKey& k : j.by_counting) {
    bench(k);
    benched_text += fmt::format(
        "; {} disputed before and sits out the run's next {} round "
        "attempt(s)",
        secure::short_id(k), bench_left(k));
  }
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("round {}: the dispute on segment {} (attempt {}) is counted, {}{}",
                    j.call.round, j.call.segment, j.call.attempt, why,
                    benched_text.empty() ? std::string("; no one benched") : benched_text));
}

void TrackerCore::handle_verdict(TimePoint now, const PeerKey& from, const Verdict& verdict) {
  const Statement& v = verdict.judged;
  const auto it = std::find_if(judgings_.begin(), judgings_.end(), [&](const Judging& j) {
    return j.call.judge == from && j.call.round == v.round && j.call.attempt == v.attempt &&
           j.call.segment == v.segment;
  });
  if (it == judgings_.end()) return;  // not called, or too late: the dispute was counted
  const Judging j = *it;
  judgings_.erase(it);
  const std::optional<Finding> finding = judge_finding(config_.run_id, j.call, verdict);
  const PeerKey& owner = j.call.owner_result.signer;
  const PeerKey& checker = j.call.checker_result.signer;
  const std::string judge = secure::short_id(from);
  if (!finding) {
    misbehaved(now, from, fmt::format("sent a verdict on segment {} it did not sign", v.segment),
               false);
    judge_by_counting(j, fmt::format("the judge {} sent a verdict it did not sign", judge));
    return;
  }
  if (*finding == Finding::owner_lied || *finding == Finding::checker_lied) {
    const bool owner_lied = *finding == Finding::owner_lied;
    const PeerKey& liar = owner_lied ? owner : checker;
    const PeerKey& honest = owner_lied ? checker : owner;
    // The pair is decided: neither counts the other as a dispute partner any more (the liar's
    // bench, doubling, is what remembers its lie).
    for (const auto& [x, y] : {std::pair(honest, liar), std::pair(liar, honest)})
      if (const auto partners = disputes_.find(x); partners != disputes_.end()) {
        partners->second.erase(y);
        if (partners->second.empty()) disputes_.erase(partners);
      }
    bench(liar);
    event(TrackerEvent::Kind::notice, liar,
          fmt::format(
              "round {}: the judge {} recomputed segment {} (attempt {}) and found the {}'s "
              "mean: {} signed a wrong one and sits out the run's next {} round "
              "attempt(s); {} is cleared",
              j.call.round, judge, j.call.segment, j.call.attempt, owner_lied ? "checker" : "owner",
              secure::short_id(liar), bench_left(liar), secure::short_id(honest)));
    return;
  }
  if (*finding == Finding::neither_matches) {
    // A third disputer: the judge disputed with both, and counts as one that disputed before when
    // it already had a partner.
    std::set<PeerKey> by_counting = j.by_counting;
    std::set<PeerKey>& of_judge = disputes_[from];
    if (!of_judge.empty()) by_counting.insert(from);
    of_judge.insert({owner, checker});
    disputes_[owner].insert(from);
    disputes_[checker].insert(from);
    judge_by_counting(Judging{.call = j.call, .members = j.members, .by_counting = by_counting},
                      fmt::format("the judge {} found a mean neither signed", judge));
    return;
  }
  if (verdict.equivocation) {
    const std::set<PeerKey> at_fault =
        proven_at_fault(config_.run_id, *verdict.equivocation, j.members);
    for (const PeerKey& k : at_fault)
      misbehaved(now, k,
                 fmt::format("round {}: signed two different contributions to segment {} (shown "
                             "by the judge {})",
                             j.call.round, j.call.segment, judge),
                 true);
  }
  std::string missing;
  for (const PeerKey& k : verdict.missing)
    missing += (missing.empty() ? "" : ", ") + secure::short_id(k);
  judge_by_counting(j, missing.empty()
                           ? fmt::format("the judge {} found a contributor's two digests", judge)
                           : fmt::format("the judge {} lacked what {} owed it", judge, missing));
}

void TrackerCore::judging_timer(TimePoint now) {
  std::vector<Judging> due;
  std::erase_if(judgings_, [&](const Judging& j) {
    if (now < j.deadline) return false;
    due.push_back(j);
    return true;
  });
  for (const Judging& j : due)
    judge_by_counting(
        j, fmt::format("the judge {} sent no verdict in time", secure::short_id(j.call.judge)));
}

TimePoint TrackerCore::judging_deadline() const {
  TimePoint next = kNever;
  for (const Judging& j : judgings_) next = std::min(next, j.deadline);
  return next;
}

}  // namespace loco::proto
