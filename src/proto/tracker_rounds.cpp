// TrackerCore rounds: readiness, the quorum rule, groups and their attempts, commit, abort and
// retry.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

void TrackerCore::handle_ready(TimePoint now, const PeerKey& from, const Ready& ready) {
  MemberRecord& m = members_.at(from);
  // A late member's step time counts too: the phase is the median member's, ready or not.
  if (ready.step_seconds > 0) m.step_seconds = ready.step_seconds;
  if (!in_sync(m) || ready.base_hash != committed_hash_) {
    send_resync(now, from);  // its update is built on a state the run has left behind
    return;
  }
  if (ready.round != next_round()) {
    misbehaved(now, from,
               fmt::format("said ready for round {} while the run is at round {}", ready.round,
                           next_round()),
               false);
    return;
  }
  if (run_over()) {  // a peer with more steps to train than the run has: it trains on alone
    send(from, AbortRound{.round = next_round(),
                          .attempt = 0,
                          .reason = fmt::format("the run ended at round {}, its final round",
                                                committed_round_),
                          .retry = false});
    return;
  }
  if (in_attempt(from)) return;  // already in the running group
  // Once a round for each benched member (a pass over the members): before it is told it sits out.
  if (benched(from) && !refused_.contains(from)) let_benched_back_if_too_few();
  if (refused_.contains(from)) {
    held_back_.insert(from);  // told this round already: answered when the round ends
    return;
  }
  if (benched(from)) {
    refused_.insert(from);  // told once a round: the others do not wait for it
    send(from, AbortRound{.round = next_round(),
                          .attempt = 0,
                          .reason = fmt::format(
                              "this peer sits out the run's next {} round attempt(s): it named "
                              "members of its group that no other member named, or was disputed "
                              "with a second partner",
                              bench_left(from)),
                          .retry = false});
    return;
  }
  ready_[from] = ReadyEntry{.update_norm = ready.update_norm,
                            .loss = ready.loss,
                            .upload_bps = m.member.upload_bps,
                            .tokens = ready.tokens,
                            .at = now};
  first_ready_ = std::min(first_ready_, now);
}

QuorumInput TrackerCore::quorum_input() const {
  QuorumInput in{.now = TimePoint::min(),
                 .live = 0,
                 .eligible = 0,
                 .ready = ready_.size(),
                 .catching_up = 0,
                 .previous_group_ready = true,
                 .first_ready = first_ready_,
                 .min_peers = config_.min_peers,
                 .join_timeout = config_.join_timeout,
                 .straggler_wait = straggler_wait()};
  // Members told to sit the round out are not live for it: counted, k liars that get 2k honest
  // members benched would hold back every group of a run of 4k for as long as the benches last.
  // Nor are members no longer waited for: counted, k silent members (heartbeating, never ready)
  // would hold back every group of a run of 2k for good.
  // One merge of three lists ordered by key (the members, the ready ones, the last group): this
  // runs after every tracker input while anyone is ready, so no lookup per member.
  quorum_members_walked_ += members_.size();
  auto ready = ready_.begin();
  auto last = previous_group_.begin();
  for (const auto& [key, m] : members_) {
    while (ready != ready_.end() && ready->first < key) ++ready;
    while (last != previous_group_.end() && *last < key) ++last;
    const bool is_ready = ready != ready_.end() && ready->first == key;
    const bool in_last_group = last != previous_group_.end() && *last == key;
    const bool counted = is_ready || (!sits_out(key) && waited_for(m, in_last_group));
    // Those of the last group that are gone, sit this round out or are no longer waited for cannot
    // hold the fast path.
    if (in_last_group && !is_ready && counted) in.previous_group_ready = false;
    if (!counted) continue;
    ++in.live;
    if (is_ready) {
      ++in.eligible;
    } else if (m.resyncing) {
      // In a run bounded by time a member fetching the state is not waited for: once in sync it
      // trains a whole phase, so the group could not wait for it anyway, and one stopped mid-round
      // (told to fetch when the round it missed committed) would hold every round till evicted.
      if (in.straggler_wait == Duration::zero()) ++in.catching_up;
    } else if (in_sync(m)) {
      ++in.eligible;
    }
  }
  return in;
}

bool TrackerCore::waited_for(const PeerKey& key, const MemberRecord& m) const {
  return waited_for(m, std::ranges::binary_search(previous_group_, key));
}

bool TrackerCore::waited_for(const MemberRecord& m, bool in_last_group) const {
  if (m.catch_up_wait) return true;  // its fetch ended behind the run (grant_catch_up)
  // A member of the last committed group is waited for until it misses a round even with
  // wait_rounds 0; not beyond wait_rounds, or silent members of that group would count for ever.
  return m.rounds_missed < std::max<std::uint32_t>(config_.wait_rounds, in_last_group ? 1 : 0);
}

bool TrackerCore::missing(const PeerKey& key, const MemberRecord& m) const {
  return !ready_.contains(key) && waited_for(key, m) && (m.resyncing || in_sync(m)) &&
         !sits_out(key);
}

std::optional<Duration> TrackerCore::known_phase() const {
  std::optional<Duration> phase;
  if (config_.pacing.on()) phase = round_phase();  // a pass over the members: only when paced
  if (!recent_periods_.empty()) {
    const Duration shortest = *std::min_element(recent_periods_.begin(), recent_periods_.end());
    phase = std::max(phase.value_or(Duration::zero()), shortest);
  }
  return phase;
}

Duration TrackerCore::vain_wait(std::optional<Duration> phase) const {
  return std::max(phase.value_or(Duration::zero()), config_.join_timeout);
}

bool TrackerCore::quorum_stuck(const QuorumInput& in) const {
  return !ready_.empty() && in.ready >= std::max<std::size_t>(config_.min_peers, 1) &&
         formation_deadline(in) == kNever;
}

TimePoint TrackerCore::vain_wait_end(const QuorumInput& in) const {
  if (!quorum_stuck(in)) return kNever;
  return std::max(first_ready_, quorum_wait_from_) + vain_wait(known_phase());
}

void TrackerCore::count_wait_in_vain(TimePoint now) {
  if (attempt_ || pending_retry_ || ready_.empty()) return;
  // The time first: the quorum's input is a pass over the members, and this runs at every input.
  const std::optional<Duration> phase = known_phase();
  const Duration wait = vain_wait(phase);
  if (std::max(first_ready_, quorum_wait_from_) + wait > now) return;
  const QuorumInput in = quorum_input();
  if (!quorum_stuck(in)) {
    quorum_memo_ = in;  // nothing changed: try_form() forms from it
    return;
  }
  quorum_wait_from_ = now;
  ++round_attempts_;  // benches run out while no round forms, too
  std::size_t missed = 0;
  if (phase)
    for (auto& [key, m] : members_)
      if (missing(key, m)) {
        ++m.rounds_missed;
        ++missed;
      }
  const std::string what =
      fmt::format("round {}: {} of {} live members ready after {} s, no majority", next_round(),
                  in.ready, in.live, std::chrono::duration<double>(wait).count());
  event(TrackerEvent::Kind::notice, std::nullopt,
        phase ? fmt::format("{}: the {} not ready miss a round (after {} they are not waited for)",
                            what, missed, config_.wait_rounds)
              : what + " (no round measured yet to count those not ready out by)");
  for (const auto& [key, m] : members_)
    if (benched_.contains(key) && !benched(key)) let_back(key, what + ": a bench ended");
}

TimePoint TrackerCore::formation_deadline(const QuorumInput& in) const {
  const TimePoint at = std::max(formation_time(in), restart_hold());
  if (at == kNever || ready_.size() != 2 || in.live <= 2) return at;
  const auto first = ready_.begin()->first, second = std::next(ready_.begin())->first;
  if (!unjudged_.contains({first, second})) return at;
  return std::max(at, first_ready_ + 2 * config_.join_timeout);
}

void TrackerCore::note_unjudged(const PeerKey& a, const PeerKey& b) {
  if (unjudged_.size() >= kMaxBarred)
    std::erase_if(unjudged_, [&](const auto& pair) {
      return !members_.contains(pair.first) || !members_.contains(pair.second);
    });
  if (unjudged_.size() >= kMaxBarred) unjudged_.erase(unjudged_.begin());
  unjudged_.insert(std::minmax(a, b));
}

std::optional<Duration> TrackerCore::round_phase() const {
  if (!config_.pacing.on()) return std::nullopt;  // runs paced by steps: no O(members) pass
  std::vector<float> step_seconds;
  for (const auto& [key, m] : members_) step_seconds.push_back(m.step_seconds);
  return paced_phase(step_seconds, config_.pacing);
}

std::uint32_t TrackerCore::phase_ms() const {
  const std::optional<Duration> phase = round_phase();
  // Rounded down: H steps of the median member's time reach it.
  return phase ? static_cast<std::uint32_t>(
                     std::chrono::duration_cast<std::chrono::milliseconds>(*phase).count())
               : 0;
}

Duration TrackerCore::straggler_wait() const {
  const std::optional<Duration> phase = round_phase();
  if (!phase) return config_.straggler_wait;
  return std::chrono::duration_cast<Duration>(kStragglerShare * *phase);
}

void TrackerCore::release_if_too_few(TimePoint now) {
  if (attempt_ || ready_.empty()) return;
  if (release_time(quorum_memo_ ? *quorum_memo_ : quorum_input()) > now) return;
  quorum_memo_.reset();
  const std::string reason =
      fmt::format("{} peer(s) ready, the run needs {}", ready_.size(), config_.min_peers);
  event(TrackerEvent::Kind::round_aborted, std::nullopt,
        fmt::format("round {} not formed: {}; the peers keep training and try again", next_round(),
                    reason));
  ++round_attempts_;
  for (const auto& [key, entry] : ready_)
    send(key, AbortRound{.round = next_round(), .attempt = 0, .reason = reason, .retry = false});
  release_held_back(reason);
  ready_.clear();
  refused_.clear();
  first_ready_ = kNever;
}

void TrackerCore::release_held_back(const std::string& reason) {
  for (const PeerKey& key : held_back_)
    if (members_.contains(key))
      send(key, AbortRound{.round = next_round(), .attempt = 0, .reason = reason, .retry = false});
  held_back_.clear();
}

void TrackerCore::try_form(TimePoint now) {
  quorum_memo_.reset();
  count_wait_in_vain(now);  // leaves quorum_memo_ set when it computed it and changed nothing
  // Each pass either forms the group or drops refused updates from ready_, so this ends.
  while (!attempt_ && !pending_retry_ && !ready_.empty()) {
    const QuorumInput in = quorum_memo_ ? *quorum_memo_ : quorum_input();
    if (formation_deadline(in) > now) {
      quorum_memo_ = in;  // nothing changes before release_if_too_few() reads it
      break;
    }
    quorum_memo_.reset();  // what follows changes who is ready, or forms the group
    const Screened screened = screen_updates(ready_, config_.update_norm_limit, norm_floor_);
    for (const auto& [key, reason] : screened.refused) {
      ready_.erase(key);
      refused_.insert(key);  // the others do not wait for it to say ready again this round
      misbehaved(now, key, "update refused: " + reason, false);
      send(key, AbortRound{.round = next_round(),
                           .attempt = 0,
                           .reason = "your update was refused: " + reason,
                           .retry = false});
    }
    if (!screened.refused.empty()) continue;
    median_norm_ = screened.median_norm;
    start_attempt(now, ring_order(linkable_group(screened.group), ready_), /*formed=*/true);
  }
  if (!pending_retry_) release_if_too_few(now);
}

void TrackerCore::start_attempt(TimePoint now, std::vector<PeerKey> group, bool formed) {
  if (view_dirty_) flush_view(now);  // the members must know each other's addresses
  if (formed) {
    ++round_attempts_;
    formed_size_ = group.size();
    // Those the rule waited for and that are not in the group missed this round. One told to
    // sit it out did not: counted, a member back from its bench would not be waited for.
    for (auto& [key, m] : members_)
      if (missing(key, m)) ++m.rounds_missed;
    for (auto& [key, m] : members_) m.catch_up_wait = false;  // waited for in this formation
  }
  ++attempts_this_round_;
  // Unique within the round even after a give-up: a member's chunks of an earlier attempt must
  // not pass for the new one's.
  // A checked direct exchange: an order no member chooses (its neighbours check it).
  if (config_.check_owners && relay_links_ == RelayLinks::every_pair) order_unsteerably(group);
  // Unreachable members apart in the ring, and a relay for each pair of them (relay_plan.hpp).
  const std::vector<RelaySeat> order = relay_seats(group);
  std::vector<PeerKey> ring = interleave_unreachable(order);
  keep_disputed_apart(ring);
  std::vector<RelayRoute> relays = plan_relays(relay_seats(ring), relay_links_);
  counters_.relayed_links += relays.size();
  attempt_ = Attempt{.number = ++last_attempt_number_,
                     .members = std::move(ring),
                     .deadline = now + config_.round_timeout,
                     .done = {},
                     .relays = std::move(relays)};
  // Rounds bounded by time: each member's update weighs by its tokens, as clamped here.
  std::vector<std::uint64_t> claims;
  for (const PeerKey& k : attempt_->members) {
    const auto entry = ready_.find(k);
    claims.push_back(entry == ready_.end() ? 0 : entry->second.tokens);
  }
  const Group message{.round = next_round(),
                      .attempt = attempt_->number,
                      .epoch = epoch_,
                      .members = attempt_->members,
                      .median_norm = median_norm_,
                      .norm_limit = config_.update_norm_limit,
                      .trim = trim_count(config_.trim, attempt_->members.size()),
                      .tokens = weigh_tokens(claims, config_.token_weighting),
                      .phase_ms = phase_ms(),
                      .relays = attempt_->relays,
                      .check_owners = config_.check_owners};
  for (const PeerKey& k : attempt_->members) send(k, message);
  event(TrackerEvent::Kind::round_formed, std::nullopt,
        fmt::format("round {} attempt {}: a group of {}{}", next_round(), attempt_->number,
                    attempt_->members.size(),
                    attempt_->relays.empty()
                        ? ""
                        : fmt::format(", {} link(s) relayed", attempt_->relays.size())));
}

bool TrackerCore::benched(const PeerKey& peer) const {
  return bench_left(peer) > 0;
}

std::uint64_t TrackerCore::bench_left(const PeerKey& peer) const {
  const auto it = benched_.find(peer);
  if (it == benched_.end() || it->second.until < next_round_attempt()) return 0;
  return it->second.until - next_round_attempt() + 1;
}

void TrackerCore::bench(const PeerKey& accuser) {
  if (config_.accusation_bench_rounds == 0) return;
  if (benched_.size() >= kMaxBarred && !benched_.contains(accuser)) {
    std::erase_if(benched_,
                  [&](const auto& entry) { return entry.second.until < next_round_attempt(); });
    if (benched_.size() >= kMaxBarred) benched_.erase(benched_.begin());
  }
  Bench& b = benched_[accuser];
  b.times = std::min<std::uint32_t>(b.times + 1, 11);  // doubling up to 1,024 times as long
  b.until =
      next_round_attempt() + (std::uint64_t{config_.accusation_bench_rounds} << (b.times - 1));
}

void TrackerCore::let_benched_back_if_too_few() {
  std::vector<PeerKey> sitting;
  for (const auto& [key, m] : members_)
    if (benched(key)) sitting.push_back(key);
  const std::size_t needed = std::max<std::size_t>(config_.min_peers, 1);
  if (sitting.empty() || members_.size() - sitting.size() >= needed) return;
  const std::string reason =
      fmt::format("{} of the {} members are benched, and a round needs {}: every bench ends now",
                  sitting.size(), members_.size(), needed);
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("round {}: {}", next_round(), reason));
  for (const PeerKey& key : sitting) {
    benched_.at(key).until = 0;  // `times` stays: a bench that follows is as long as it was due
    let_back(key, reason);
  }
}

void TrackerCore::let_back(const PeerKey& key, const std::string& reason) {
  refused_.erase(key);
  // It asked again since it was told it sits out: told now, it says ready again.
  if (held_back_.erase(key) > 0)
    send(key, AbortRound{.round = next_round(), .attempt = 0, .reason = reason, .retry = false});
}

bool TrackerCore::in_attempt(const PeerKey& peer) const {
  return attempt_ && std::find(attempt_->members.begin(), attempt_->members.end(), peer) !=
                         attempt_->members.end();
}

void TrackerCore::handle_round_done(TimePoint now, const PeerKey& from, const RoundDone& done) {
  if (!attempt_ || done.round != next_round() || done.attempt != attempt_->number ||
      !in_attempt(from))
    return;  // a report for an attempt already aborted: harmless
  // A member's first report is its word: a second one may not change the vote.
  if (!attempt_->done.emplace(from, done.state_hash).second) return;
  decide(now);
}

void TrackerCore::decide(TimePoint now) {
  Attempt& a = *attempt_;
  std::map<Digest, std::size_t> votes;
  for (const auto& [key, hash] : a.done) ++votes[hash];
  // No tie to break: at most one state can hold more than half of the group.
  const auto best = std::max_element(
      votes.begin(), votes.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  const bool majority_holds = best != votes.end() && best->second >= majority();
  if (majority_holds && a.majority_at == kNever) a.majority_at = now;
  const bool all_in = a.done.size() == a.members.size();
  if (majority_holds && (all_in || now >= a.majority_at + config_.report_grace)) {
    commit(now, best->first);
    return;
  }
  if (all_in) {
    abort_attempt(now,
                  fmt::format("no state was reported by a majority ({} of the group of {}): "
                              "{} different states",
                              majority(), formed_size_, votes.size()),
                  {}, /*retry=*/false);
    return;
  }
  if (now >= a.deadline) {
    std::set<PeerKey> stragglers;
    for (const PeerKey& k : a.members)
      if (!a.done.contains(k)) stragglers.insert(k);
    if (relays_timed_out(now, stragglers)) return;
    abort_attempt(now,
                  fmt::format("{} member(s) did not finish within {} s", stragglers.size(),
                              std::chrono::duration<double>(config_.round_timeout).count()),
                  stragglers);
  }
}

namespace {

// The members' losses less the trim share of the smallest and of the largest (trim_count, as the
// direct exchange's owners trim updates): a minority that lies about its loss does not move the
// round's figure on the status page. NaN when no member said one.
float trimmed_mean(std::vector<float> values, float trim) {
  if (values.empty()) return std::numeric_limits<float>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t t = trim_count(trim, values.size());
  double sum = 0;
  for (std::size_t i = t; i < values.size() - t; ++i) sum += values[i];
  return static_cast<float>(sum / static_cast<double>(values.size() - 2 * t));
}

}  // namespace

void TrackerCore::commit(TimePoint now, const Digest& hash) {
  const Attempt attempt = std::move(*attempt_);
  attempt_.reset();
  committed_round_ = next_round();
  committed_hash_ = hash;
  std::vector<float> losses;
  for (const auto& [key, reported] : attempt.done) {
    MemberRecord& m = members_.at(key);
    m.state_round = committed_round_;
    m.state_hash = reported;
    if (reported != hash) continue;
    m.rounds_missed = 0;
    // The loss of the steps behind its update, as it said when ready (a claim: shown only).
    const auto entry = ready_.find(key);
    if (entry != ready_.end() && std::isfinite(entry->second.loss) && entry->second.loss >= 0)
      losses.push_back(entry->second.loss);
  }
  history_.push_back(RoundRecord{
      .round = committed_round_,
      .unix_ms = static_cast<std::uint64_t>(
          unix_ms_at_zero_ +
          std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count()),
      .group_size = static_cast<std::uint32_t>(attempt.members.size()),
      .mean_loss = trimmed_mean(std::move(losses), config_.trim),
      .state_hash = hash});
  if (history_.size() > TrackerSnapshot::kMaxHistory) history_.erase(history_.begin());
  previous_group_ = attempt.members;
  std::ranges::sort(previous_group_);  // waited_for() looks each member up in it
  // The next reference may fall by at most the limit per round: honest updates shrink as the
  // learning rate decays, not by orders of magnitude at once.
  norm_floor_ = config_.update_norm_limit > 0 ? median_norm_ / config_.update_norm_limit : 0;
  held_back_.clear();  // out of sync now: each is told to fetch the committed state
  // The next round starts from nothing ready: those ready outside the attempt said so on the state
  // before this one, and resync_out_of_sync() below tells each to fetch this one.
  ready_.clear();
  end_round(now);
  if (recent_periods_.size() == kRecentPeriods) recent_periods_.pop_front();
  recent_periods_.push_back(now - last_commit_at_);
  last_commit_at_ = now;
  last_attempt_number_ = 0;
  ++counters_.rounds_committed;
  // Saved before the commits go out (call order in the header): a commit the tracker could forget
  // would let it number the next round again.
  event(TrackerEvent::Kind::state_changed, std::nullopt,
        fmt::format("round {} committed", committed_round_));
  event(TrackerEvent::Kind::round_committed, std::nullopt,
        fmt::format("round {} committed by {} of a group of {}: state {}", committed_round_,
                    std::count_if(attempt.done.begin(), attempt.done.end(),
                                  [&](const auto& d) { return d.second == hash; }),
                    attempt.members.size(), to_hex(hash).substr(0, 12)));
  const Commit message{.round = committed_round_, .attempt = attempt.number, .state_hash = hash};
  for (const PeerKey& k : attempt.members)
    if (members_.contains(k)) send(k, message);
  resync_out_of_sync(now);
  if (run_over()) final_round_committed();
}

void TrackerCore::handle_round_failed(TimePoint now, const PeerKey& from,
                                      const RoundFailed& failed) {
  if (failed.round != next_round()) return;
  if (pending_retry_ && failed.attempt == pending_retry_->attempt) {
    add_accusation(now, from, failed);  // another member's word on the attempt just stopped
    return;
  }
  if (!attempt_ || failed.attempt != attempt_->number || !in_attempt(from)) return;
  const std::string report = fmt::format("{} reported: {}", secure::short_id(from), failed.reason);
  if (failed.suspect &&
      std::any_of(attempt_->relays.begin(), attempt_->relays.end(), [&](const RelayRoute& r) {
        const auto& m = attempt_->members;
        return m[r.via] == *failed.suspect && (m[r.a] == from || m[r.b] == from);
      })) {
    relay_failed(now, from, *failed.suspect, report);
    return;
  }
  const bool named = failed.suspect && *failed.suspect != from && in_attempt(*failed.suspect);
  if (!named) {
    // A failure it names no one for: its own, taken on trust the first time in a round; a second
    // takes it out and benches it, so that failing every round costs the run one retry a round.
    const bool first = reported_.insert(from).second;
    if (!first) bench(from);
    abort_attempt(now, report, first ? std::set<PeerKey>{} : std::set<PeerKey>{from});
    return;
  }
  // An accusation. The tracker cannot tell who is right unless the accused leaves (a crash) or
  // most of the group names it too (a poisoned update reaches every member): every member stops
  // now, and the retry waits accusation_grace to hear which.
  const Attempt attempt = std::move(*attempt_);
  attempt_.reset();
  ++counters_.rounds_aborted;
  event(TrackerEvent::Kind::round_aborted, std::nullopt,
        fmt::format("round {} attempt {} aborted: {} (naming {}); the retry waits up to {} s "
                    "to hear whether it leaves or others name it too",
                    next_round(), attempt.number, report, secure::short_id(*failed.suspect),
                    std::chrono::duration<double>(config_.accusation_grace).count()));
  const AbortRound message{
      .round = next_round(), .attempt = attempt.number, .reason = report, .retry = true};
  for (const PeerKey& k : attempt.members)
    if (members_.contains(k)) send(k, message);
  pending_retry_ = PendingRetry{.attempt = attempt.number,
                                .members = attempt.members,
                                .accusations = {},
                                .proven = {},
                                .deadline = now + config_.accusation_grace};
  add_accusation(now, from, failed);
}

void TrackerCore::add_accusation(TimePoint now, const PeerKey& from, const RoundFailed& failed) {
  PendingRetry& p = *pending_retry_;
  const auto member = [&](const PeerKey& k) {
    return std::find(p.members.begin(), p.members.end(), k) != p.members.end();
  };
  if (!member(from) || !failed.suspect || *failed.suspect == from || !member(*failed.suspect))
    return;
  const bool first = reported_.insert(from).second;
  p.accusations[*failed.suspect].emplace(from, first);
  if (p.accusations[*failed.suspect].size() >= majority()) settle_accusation(now);
}

// Who sits the retry out: an accused member that most of the group named; and, for an accusation
// the tracker cannot check, the accuser with the accused, unless it was the accuser's first report
// of the round (a link may drop once). An accused member that left is gone anyway. The accuser is
// benched only where the others could have confirmed it: in a group of two (or a retry no larger
// than its majority) it is one word against another, and benching the accuser would let a liar
// lock its honest partner out by poisoning it.
void TrackerCore::settle_accusation(TimePoint now) {
  const PendingRetry pending = std::move(*pending_retry_);
  pending_retry_.reset();
  std::set<PeerKey> excluded = pending.proven;
  const bool confirmable = pending.members.size() > majority();
  for (const auto& [suspect, accusers] : pending.accusations) {
    if (!members_.contains(suspect)) continue;
    if (accusers.size() >= majority()) {
      excluded.insert(suspect);
      misbehaved(now, suspect,
                 fmt::format("named by {} of its group of {} in round {}: it sits the retry out",
                             accusers.size(), formed_size_, next_round()),
                 false);
      continue;
    }
    for (const auto& [accuser, first] : accusers) {
      if (first) continue;
      excluded.insert(accuser);
      excluded.insert(suspect);
      if (confirmable)
        bench(accuser);
      else if (pending.members.size() == 2)
        note_unjudged(accuser, suspect);
      event(
          TrackerEvent::Kind::notice, accuser,
          fmt::format(
              "round {}: {} named {} again, and {}: both sit the retry out{}", next_round(),
              secure::short_id(accuser), secure::short_id(suspect),
              confirmable ? "no majority did" : "no other member of the group could confirm it",
              benched(accuser) ? fmt::format(", and {} sits out the run's next {} round attempt(s)",
                                             secure::short_id(accuser), bench_left(accuser))
                               : ""));
    }
  }
  retry_or_give_up(now, "after a member's report", pending.members, excluded, /*told=*/true);
}

void TrackerCore::abort_attempt(TimePoint now, const std::string& reason,
                                const std::set<PeerKey>& excluded, bool retry) {
  const Attempt attempt = std::move(*attempt_);
  attempt_.reset();
  ++counters_.rounds_aborted;
  event(TrackerEvent::Kind::round_aborted, std::nullopt,
        fmt::format("round {} attempt {} aborted: {}", next_round(), attempt.number, reason));
  if (!retry) {
    const AbortRound message{
        .round = next_round(), .attempt = attempt.number, .reason = reason, .retry = false};
    for (const PeerKey& k : attempt.members)
      if (members_.contains(k)) send(k, message);
    give_up_round(now, attempt.members);
    return;
  }
  retry_or_give_up(now, reason, attempt.members, excluded, /*told=*/false);
}

void TrackerCore::retry_or_give_up(TimePoint now, const std::string& reason,
                                   const std::vector<PeerKey>& members,
                                   const std::set<PeerKey>& excluded, bool told) {
  std::vector<PeerKey> survivors;
  for (const PeerKey& k : members)
    if (!excluded.contains(k) && members_.contains(k)) survivors.push_back(k);
  // A relay that left, or was blamed, may leave fewer unreachable members linkable.
  std::set<PeerKey> out = excluded;
  for (const PeerKey& k : unlinked_members(survivors)) {
    out.insert(k);
    std::erase(survivors, k);
    ++counters_.members_left_out;
  }
  // Each member's own reports may cost two attempts a round (the first, taken on trust, and a
  // second, which takes it out): those are not max_attempts', or k liars reporting once each
  // would give every round up once k reached it.
  const bool retry = survivors.size() >= std::max<std::size_t>(config_.min_peers, majority()) &&
                     attempts_this_round_ < config_.max_attempts + 2 * formed_size_;
  event(TrackerEvent::Kind::notice, std::nullopt,
        retry ? fmt::format("round {}: retrying with {} of the group of {}", next_round(),
                            survivors.size(), formed_size_)
              : fmt::format("round {} given up: {} of the group of {} left, it needs {}; the "
                            "peers keep training and try again",
                            next_round(), survivors.size(), formed_size_,
                            std::max<std::size_t>(config_.min_peers, majority())));
  for (const PeerKey& k : members) {
    if (!members_.contains(k)) continue;
    const bool in_retry = retry && !out.contains(k);
    if (in_retry && told) continue;
    send(k, AbortRound{.round = next_round(),
                       .attempt = last_attempt_number_,
                       .reason = in_retry ? reason : reason + "; this peer is not in the retry",
                       .retry = in_retry});
  }
  for (const PeerKey& k : out) ready_.erase(k);
  if (retry) {
    start_attempt(now, std::move(survivors), /*formed=*/false);
    return;
  }
  give_up_round(now, members);
}

void TrackerCore::give_up_round(TimePoint now, const std::vector<PeerKey>& attempt) {
  // Its members were told to train on and say ready again. Those ready outside it (a newcomer, a
  // member back from its bench) were told nothing and stay ready: forgotten, each would wait for
  // a group that never comes, counted as live and not ready.
  for (const PeerKey& k : attempt) ready_.erase(k);
  end_round(now);
}

void TrackerCore::end_round(TimePoint now) {
  release_held_back(fmt::format("round {} was given up", next_round()));
  reported_.clear();
  disputed_segments_.clear();
  relay_deadline_used_ = false;
  refused_.clear();
  first_ready_ = kNever;
  for (const auto& [key, entry] : ready_) first_ready_ = std::min(first_ready_, entry.at);
  quorum_wait_from_ = now;  // the members told to train on get a whole wait
  attempts_this_round_ = 0;
}

}  // namespace loco::proto
