// TrackerCore rounds: readiness, the quorum rule, groups and their attempts, commit, abort and
// retry.

#include <fmt/format.h>

#include <algorithm>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

void TrackerCore::handle_ready(TimePoint now, const PeerKey& from, const Ready& ready) {
  const MemberRecord& m = members_.at(from);
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
  if (in_attempt(from)) return;  // already in the running group
  ready_[from] =
      ReadyEntry{.update_norm = ready.update_norm, .upload_bps = m.member.upload_bps, .at = now};
  first_ready_ = std::min(first_ready_, now);
}

QuorumInput TrackerCore::quorum_input() const {
  QuorumInput in{.now = TimePoint::min(),
                 .live = members_.size(),
                 .eligible = 0,
                 .ready = ready_.size(),
                 .catching_up = 0,
                 .previous_group_ready = true,
                 .first_ready = first_ready_,
                 .min_peers = config_.min_peers,
                 .join_timeout = config_.join_timeout};
  for (const auto& [key, m] : members_) {
    if (m.resyncing)
      ++in.catching_up;
    else if (in_sync(m) && (refused_.empty() || !refused_.contains(key)))
      ++in.eligible;
  }
  // Those of the last group that are gone cannot be waited for.
  in.previous_group_ready =
      std::all_of(previous_group_.begin(), previous_group_.end(),
                  [&](const PeerKey& k) { return ready_.contains(k) || !members_.contains(k); });
  return in;
}

TimePoint TrackerCore::formation_deadline() const {
  return formation_time(quorum_input());
}

void TrackerCore::release_if_too_few(TimePoint now) {
  if (attempt_ || ready_.empty() || release_time(quorum_input()) > now) return;
  const std::string reason =
      fmt::format("{} peer(s) ready, the run needs {}", ready_.size(), config_.min_peers);
  event(TrackerEvent::Kind::round_aborted, std::nullopt,
        fmt::format("round {} not formed: {}; the peers keep training and try again", next_round(),
                    reason));
  for (const auto& [key, entry] : ready_)
    send(key, AbortRound{.round = next_round(), .attempt = 0, .reason = reason, .retry = false});
  ready_.clear();
  refused_.clear();
  first_ready_ = kNever;
}

void TrackerCore::try_form(TimePoint now) {
  // Each pass either forms the group or drops refused updates from ready_, so this ends.
  while (!attempt_ && !ready_.empty() && formation_deadline() <= now) {
    const Screened screened = screen_updates(ready_, config_.update_norm_limit);
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
    start_attempt(now, ring_order(screened.group, ready_));
  }
  release_if_too_few(now);
}

void TrackerCore::start_attempt(TimePoint now, std::vector<PeerKey> group) {
  if (view_dirty_) flush_view(now);  // the members must know each other's addresses
  ++attempts_this_round_;
  // Unique within the round even after a give-up: a member's chunks of an earlier attempt must
  // not pass for the new one's.
  attempt_ = Attempt{.number = ++last_attempt_number_,
                     .members = std::move(group),
                     .deadline = now + config_.round_timeout,
                     .done = {}};
  const Group message{.round = next_round(),
                      .attempt = attempt_->number,
                      .epoch = epoch_,
                      .members = attempt_->members,
                      .median_norm = median_norm_,
                      .norm_limit = config_.update_norm_limit};
  for (const PeerKey& k : attempt_->members) send(k, message);
  event(TrackerEvent::Kind::round_formed, std::nullopt,
        fmt::format("round {} attempt {}: a group of {}", next_round(), attempt_->number,
                    attempt_->members.size()));
}

bool TrackerCore::in_attempt(const PeerKey& peer) const {
  return attempt_ && std::find(attempt_->members.begin(), attempt_->members.end(), peer) !=
                         attempt_->members.end();
}

void TrackerCore::handle_round_done(TimePoint now, const PeerKey& from, const RoundDone& done) {
  if (!attempt_ || done.round != next_round() || done.attempt != attempt_->number ||
      !in_attempt(from))
    return;  // a report for an attempt already aborted: harmless
  attempt_->done[from] = done.state_hash;
  if (attempt_->done.size() == attempt_->members.size()) commit(now);
}

void TrackerCore::commit(TimePoint now) {
  // The majority hash; a tie goes to the smaller hash, so the choice does not depend on order.
  std::map<Digest, std::size_t> votes;
  for (const auto& [key, hash] : attempt_->done) ++votes[hash];
  const auto majority = std::max_element(votes.begin(), votes.end(), [](auto& a, auto& b) {
                          return a.second < b.second;
                        })->first;
  const Attempt attempt = std::move(*attempt_);
  attempt_.reset();
  committed_round_ = next_round();
  committed_hash_ = majority;
  double loss_sum = 0;
  for (const auto& [key, hash] : attempt.done) {
    MemberRecord& m = members_.at(key);
    m.state_round = committed_round_;
    m.state_hash = hash;
    loss_sum += m.stats.loss;
  }
  history_.push_back(RoundRecord{
      .round = committed_round_,
      .unix_ms = static_cast<std::uint64_t>(
          unix_ms_at_zero_ +
          std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count()),
      .group_size = static_cast<std::uint32_t>(attempt.members.size()),
      .mean_loss = static_cast<float>(loss_sum / static_cast<double>(attempt.members.size())),
      .state_hash = majority});
  if (history_.size() > TrackerSnapshot::kMaxHistory) history_.erase(history_.begin());
  previous_group_ = attempt.members;
  ready_.clear();
  refused_.clear();
  first_ready_ = kNever;
  attempts_this_round_ = 0;
  last_attempt_number_ = 0;
  ++counters_.rounds_committed;
  // Saved before the commits go out (call order in the header): a commit the tracker could forget
  // would let it number the next round again.
  event(TrackerEvent::Kind::state_changed, std::nullopt,
        fmt::format("round {} committed", committed_round_));
  event(TrackerEvent::Kind::round_committed, std::nullopt,
        fmt::format("round {} committed by a group of {}: state {}", committed_round_,
                    attempt.members.size(), to_hex(majority).substr(0, 12)));
  const Commit message{
      .round = committed_round_, .attempt = attempt.number, .state_hash = majority};
  for (const PeerKey& k : attempt.members) send(k, message);
  resync_out_of_sync(now);
}

void TrackerCore::handle_round_failed(TimePoint now, const PeerKey& from,
                                      const RoundFailed& failed) {
  if (!attempt_ || failed.round != next_round() || failed.attempt != attempt_->number ||
      !in_attempt(from))
    return;
  std::set<PeerKey> excluded;
  if (failed.suspect && in_attempt(*failed.suspect) && *failed.suspect != from) {
    excluded.insert(*failed.suspect);
    misbehaved(now, *failed.suspect,
               fmt::format("reported by {} in round {}: {}", secure::short_id(from), failed.round,
                           failed.reason),
               false);
  }
  abort_attempt(now, fmt::format("{} reported: {}", secure::short_id(from), failed.reason),
                excluded);
}

void TrackerCore::abort_attempt(TimePoint now, const std::string& reason,
                                const std::set<PeerKey>& excluded) {
  const Attempt attempt = std::move(*attempt_);
  attempt_.reset();
  ++counters_.rounds_aborted;
  std::vector<PeerKey> survivors;
  for (const PeerKey& k : attempt.members)
    if (!excluded.contains(k) && members_.contains(k)) survivors.push_back(k);
  const bool retry =
      survivors.size() >= config_.min_peers && attempts_this_round_ < config_.max_attempts;
  event(TrackerEvent::Kind::round_aborted, std::nullopt,
        fmt::format("round {} attempt {} aborted: {}; {}", next_round(), attempt.number, reason,
                    retry ? fmt::format("retrying with {} survivors", survivors.size())
                          : "the peers keep training and try again"));
  const AbortRound message{
      .round = next_round(), .attempt = attempt.number, .reason = reason, .retry = retry};
  for (const PeerKey& k : attempt.members)
    if (members_.contains(k)) send(k, message);
  for (const PeerKey& k : excluded) ready_.erase(k);
  if (retry) {
    start_attempt(now, std::move(survivors));
    return;
  }
  ready_.clear();
  refused_.clear();
  first_ready_ = kNever;
  attempts_this_round_ = 0;
}

}  // namespace loco::proto
