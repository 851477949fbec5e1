// TrackerCore shared-state registry: which members hold the run's current state, resyncs with
// donors spread over the members that hold it, and how a restarted tracker settles on the state
// its peers actually hold.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

bool TrackerCore::in_sync(const MemberRecord& m) const {
  return m.state_round == committed_round_ && m.state_hash == committed_hash_;
}

std::uint64_t TrackerCore::newest_plausible_round(TimePoint now) {
  if (!config_.gossip) return committed_round_;
  return gossip_next_round(now) + config_.gossip_round_window;
}

bool TrackerCore::committed_here(std::uint64_t round, const Digest& hash) const {
  if (round == 0) return hash == config_.genesis;
  return std::any_of(history_.begin(), history_.end(), [&](const RoundRecord& r) {
    return r.round == round && r.state_hash == hash;
  });
}

bool TrackerCore::computed_committed(const JoinRequest& request) const {
  return !config_.gossip && request.tentative_round != 0 &&
         request.tentative_round == committed_round_ && request.tentative_hash == committed_hash_ &&
         request.state_round + 1 == request.tentative_round;
}

// A leader that saved a round's commit and was killed before it sent it (or a tracker restarted
// from a state file written in that window) leaves its successor a committed round that no peer
// has installed: the group's members hold it only as their tentative state. Telling them to
// fetch it would find no donor, and the run would go back a round (reconcile()) and commit it again
// with another state. The members say their tentative state when they join again; one equal to the
// committed round and hash gets the commit it missed and counts as holding it, so the run goes on
// from that round. A claim, as the state a member says it holds is: only the very round and hash
// this run committed count, and a member that claims them and then serves nothing is handled as
// one lying about its state (docs/SECURITY.md): a fetch from it fails, the fetcher asks again.
void TrackerCore::commit_tentative(const PeerKey& peer) {
  MemberRecord& m = members_.at(peer);
  m.state_round = committed_round_;
  m.state_hash = committed_hash_;
  // Attempt 0: the tracker that ran the round's attempts is gone (no attempt is numbered 0).
  send(peer, Commit{.round = committed_round_, .attempt = 0, .state_hash = committed_hash_});
  event(TrackerEvent::Kind::notice, peer,
        fmt::format("holds round {} (state {}) as its tentative state, committed and never "
                    "announced to it: told to commit it",
                    committed_round_, to_hex(committed_hash_).substr(0, 12)));
}

bool TrackerCore::someone_in_sync() const {
  return std::any_of(members_.begin(), members_.end(),
                     [&](const auto& entry) { return in_sync(entry.second); });
}

void TrackerCore::handle_state_report(TimePoint now, const PeerKey& from,
                                      const StateReport& report) {
  const std::uint64_t newest = newest_plausible_round(now);
  if (report.round > newest) {
    misbehaved(now, from,
               fmt::format("reported the state of round {}, past the run's round {}", report.round,
                           newest),
               false);
    return;
  }
  MemberRecord& m = members_.at(from);
  m.state_round = report.round;
  m.state_hash = report.state_hash;
  if (config_.gossip) {
    gossip_state_reported(report.round);  // every member's state is its own: nothing to match
    if (std::exchange(m.resyncing, false)) catch_up_if_behind(now, from);  // a failed copy: retry
    return;
  }
  if (in_sync(m)) {
    m.resyncing = false;
    event(TrackerEvent::Kind::notice, from,
          fmt::format("back in sync at round {}", committed_round_));
    tell_run_ended(from);
    try_form(now);
    return;
  }
  // Fetched an old state (a round committed meanwhile) or a wrong one, or its fetch failed. Where
  // rounds are shorter than a download (DeMo's) and the rounds no longer wait for this member,
  // each fetch would end behind the run again: the next round waits for its fetch of the newest
  // state, at most once per key in kCatchUpRounds rounds.
  if (m.resyncing && committed_here(report.round, report.state_hash) && grant_catch_up(from))
    m.catch_up_wait = true;
  send_resync(now, from, /*again=*/m.resyncing);
}

bool TrackerCore::grant_catch_up(const PeerKey& peer) {
  const auto granted = catch_up_granted_.find(peer);
  if (granted != catch_up_granted_.end() && granted->second + kCatchUpRounds > next_round())
    return false;
  if (granted == catch_up_granted_.end() && catch_up_granted_.size() >= kMaxBarred) {
    std::erase_if(catch_up_granted_,
                  [&](const auto& entry) { return entry.second + kCatchUpRounds <= next_round(); });
    if (catch_up_granted_.size() >= kMaxBarred)
      catch_up_granted_.erase(
          std::min_element(catch_up_granted_.begin(), catch_up_granted_.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
  catch_up_granted_[peer] = next_round();
  return true;
}

void TrackerCore::resync_out_of_sync(TimePoint now) {
  for (auto& [key, m] : members_)
    if (!in_sync(m)) send_resync(now, key);
}

void TrackerCore::send_resync(TimePoint now, const PeerKey& peer, bool again) {
  send_resync(now, peer, committed_round_, committed_hash_, again);
}

void TrackerCore::send_resync(TimePoint now, const PeerKey& peer, std::uint64_t round,
                              const Digest& hash, bool again) {
  // The donors admit only members of the view they hold: a newcomer not in it yet would be turned
  // away by every donor it is named. A member the last broadcast lists (one that joins again) is
  // in their views already: it gets no early broadcast, however often it joins again.
  if (view_dirty_ && !std::ranges::binary_search(broadcast_.members, peer, {}, &Member::key))
    flush_view(now);
  MemberRecord& m = members_.at(peer);
  m.resyncing = true;
  ready_.erase(peer);
  std::vector<Donor> donors = pick_donors(peer, round, hash);
  // No live member holds the state, or the members named last time did not hand it over (they
  // may lie about the bytes, and the least-asked holders may be the same liars again): the
  // tracker serves its custody copy over the peer's link, beside any members named.
  if ((donors.empty() || again) && custody_ && custody_->round == round &&
      custody_->state_hash == hash)
    donors.push_back(Donor{.key = identity_.public_key(), .address = {}});
  send(peer, Resync{.round = round, .state_hash = hash, .donors = donors, .phase_ms = phase_ms()});
}

// The reachable members holding the state (a fetch is opened by the fetcher, so a donor nobody
// can dial serves no one: link_direction.hpp) that have served fewest
// resyncs, so that no single donor serves every newcomer; ties go by key, so the choice is
// reproducible.
std::vector<Donor> TrackerCore::pick_donors(const PeerKey& newcomer, std::uint64_t round,
                                            const Digest& hash) {
  std::vector<MemberRecord*> candidates;
  for (auto& [key, m] : members_)
    if (key != newcomer && m.state_round == round && m.state_hash == hash && !m.resyncing &&
        m.member.reachability == Reachability::reachable)
      candidates.push_back(&m);
  const std::size_t n =
      std::min<std::size_t>({candidates.size(), config_.donors_per_resync, kMaxDonors});
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(n),
                    candidates.end(), [](const MemberRecord* a, const MemberRecord* b) {
                      return a->donor_load != b->donor_load ? a->donor_load < b->donor_load
                                                            : a->member.key < b->member.key;
                    });
  std::vector<Donor> donors;
  for (std::size_t i = 0; i < n; ++i) {
    ++candidates[i]->donor_load;
    donors.push_back(
        Donor{.key = candidates[i]->member.key, .address = candidates[i]->member.address});
  }
  return donors;
}

// When no live member holds the committed state (every holder left, or a restarted tracker whose
// last commit never reached its peers) and the custody copy is not that state, the run goes on
// from the newest state available (settle_state): the live members' newest, the one most of them
// hold among equals, or the custody copy when it is at least as new; rather than waiting forever.
// Round numbers then continue from that state's round: the rounds after it are done again.
// A restarted tracker first gives its peers reconcile_after_ to come back.
void TrackerCore::reconcile(TimePoint now) {
  if (config_.gossip) return;  // nothing is committed, so there is nothing to settle on
  if (members_.empty() || state_available() || now < reconcile_after_ || attempt_ || pending_retry_)
    return;
  if (run_over()) {
    wait_for_the_final_state(now);
    return;
  }
  // Only states this run committed: what a member says it holds is a claim, and one that names a
  // round the tracker has no record of could be anything.
  std::map<std::pair<std::uint64_t, Digest>, std::size_t> holders;
  for (const auto& [key, m] : members_)
    if (committed_here(m.state_round, m.state_hash)) ++holders[{m.state_round, m.state_hash}];
  std::vector<proto::HeldState> held;
  for (const auto& [state, n] : holders)
    held.push_back(proto::HeldState{.round = state.first, .hash = state.second, .holders = n});
  if (held.empty() && !custody_) {
    reconcile_after_ = now + config_.eviction_timeout;  // look again then (or at the next join)
    if (!std::exchange(no_known_state_noted_, true))
      event(TrackerEvent::Kind::notice, std::nullopt,
            fmt::format("no live peer holds a state this run committed (round {} is the last): "
                        "waiting for one (a tracker started without its state file starts the run "
                        "anew: restore the file, or give the run a new id)",
                        committed_round_));
    return;
  }
  no_known_state_noted_ = false;
  const StateSource source = settle_state(held, custody_);
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("no live peer holds round {} (state {}): the run goes on from round {} (state "
                    "{}), {}",
                    committed_round_, to_hex(committed_hash_).substr(0, 12), source.round,
                    to_hex(source.hash).substr(0, 12),
                    source.custody ? std::string("the tracker's custody copy")
                                   : fmt::format("held by {} peer(s)",
                                                 holders.at({source.round, source.hash}))));
  if (source.round < committed_round_) {
    // Those rounds will be committed again with other states: the history drops them, and the
    // status says they were lost.
    std::erase_if(history_, [&](const RoundRecord& r) { return r.round > source.round; });
    lost_rounds_.push_back(
        LostRounds{.first = source.round + 1,
                   .last = committed_round_,
                   .went_back_to = source.round,
                   .unix_ms = static_cast<std::uint64_t>(
                       unix_ms_at_zero_ +
                       std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch())
                           .count())});
    if (lost_rounds_.size() > TrackerSnapshot::kMaxLostRounds)
      lost_rounds_.erase(lost_rounds_.begin());
    event(TrackerEvent::Kind::notice, std::nullopt,
          fmt::format("rounds {} to {} are lost: no live peer and no custody copy holds them",
                      source.round + 1, committed_round_));
  }
  committed_round_ = source.round;
  committed_hash_ = source.hash;
  ready_.clear();
  refused_.clear();
  first_ready_ = kNever;
  previous_group_.clear();
  event(TrackerEvent::Kind::state_changed, std::nullopt,
        fmt::format("settled on round {}", committed_round_));
  // A member told to fetch the state no one held holds the run's state now: a resync to it tells
  // it to stop fetching (a peer takes a state it holds from itself), and it reports back in sync.
  for (auto& [key, m] : members_)
    if (m.resyncing && in_sync(m)) send_resync(now, key);
  resync_out_of_sync(now);
}

}  // namespace loco::proto
