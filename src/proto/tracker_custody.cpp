// TrackerCore checkpoint custody: every few committed rounds the tracker pulls the majority state
// from one member that holds it (a CustodyPull over the tracker link), hands it to its driver to
// store, and serves the newest stored copy when no live member holds the run's state
// (docs/TRACKER.md, "Checkpoint custody").

#include <fmt/format.h>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

std::optional<CustodyCopy> TrackerCore::poll_custody() {
  if (custody_out_.empty()) return std::nullopt;
  CustodyCopy c = std::move(custody_out_.front());
  custody_out_.pop_front();
  return c;
}

void TrackerCore::set_custody(StateManifest manifest,
                              std::shared_ptr<const std::vector<std::byte>> state) {
  quorum_memo_.reset();
  custody_ = CustodyEntry{
      .round = manifest.round, .state_hash = manifest.state_hash(), .bytes = manifest.total_bytes};
  last_pulled_ = std::max(last_pulled_.value_or(0), manifest.round);
  custody_state_ = std::move(state);
  custody_server_.serve(std::move(manifest), StateBytes({std::span(*custody_state_)}));
  if (!run_over() || !custody_serves()) return;
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("the run's final state (round {}, state {}) is in the tracker's custody: "
                    "`loco-tracker export` writes the model",
                    committed_round_, to_hex(committed_hash_).substr(0, 12)));
  tell_members_run_ended();
}

bool TrackerCore::custody_serves() const {
  return custody_ && custody_->round == committed_round_ && custody_->state_hash == committed_hash_;
}

void TrackerCore::handle_state_relay(TimePoint now, const PeerKey& from, const StateRelay& relay) {
  if (is_state_request(relay.inner)) {
    // A member fetching the custody copy (it was named the tracker as its donor).
    custody_server_.on_message(from, relay.inner, relay.body);
    while (auto t = custody_server_.poll_transmit()) send_relay(t->to, t->type, t->body);
    return;
  }
  // The answer of the donor of the pull under way; anything else answers a pull given up.
  if (pull_ && from == pull_->config().donor) {
    pull_->on_message(now, from, relay.inner, relay.body);
    pump_pull(now);
  }
}

void TrackerCore::custody_timer(TimePoint now) {
  if (pull_ && pull_->config().round != committed_round_) {
    pull_.reset();  // the run moved on (or settled elsewhere): pull the new state instead
  }
  if (pull_) {
    if (!members_.contains(pull_->config().donor)) pull_->on_donor_lost(now, pull_->config().donor);
    pull_->on_timer(now);
    pump_pull(now);
  }
  if (pull_ || custody_off_ ||
      !custody_due(committed_round_, last_pulled_, config_.custody.every, config_.final_round))
    return;
  if (pull_round_ != committed_round_) {
    // A new round to copy. A wait under way is not pushed back, or fast rounds would starve it.
    pull_round_ = committed_round_;
    pull_tried_.clear();
    pull_backoff_ = config_.custody.settle;
    if (pull_after_ <= now) pull_after_ = now + config_.custody.settle;
  }
  if (now >= pull_after_) start_pull(now);
}

TimePoint TrackerCore::custody_deadline() const {
  if (pull_) return pull_->poll_timeout();
  if (custody_off_ ||
      !custody_due(committed_round_, last_pulled_, config_.custody.every, config_.final_round))
    return kNever;
  return pull_after_;
}

// One member that holds the committed state, the least loaded with serving first; a round's
// failed donors are not asked again until every one has been tried.
void TrackerCore::start_pull(TimePoint now) {
  MemberRecord* donor = nullptr;
  for (auto& [key, m] : members_) {
    if (!in_sync(m) || m.resyncing || pull_tried_.contains(key)) continue;
    if (!donor || m.donor_load < donor->donor_load) donor = &m;
  }
  if (!donor) {
    pull_tried_.clear();
    pull_after_ = now + pull_backoff_;
    pull_backoff_ = std::min(2 * pull_backoff_, config_.custody.retry);
    return;
  }
  ++donor->donor_load;
  pull_ = std::make_unique<CustodyPull>(
      CustodyPullConfig{.round = committed_round_,
                        .state_hash = committed_hash_,
                        .donor = donor->member.key,
                        .max_state_bytes = config_.custody.max_state_bytes,
                        .bytes_per_s = config_.custody.pull_bytes_per_s},
      now);
  pump_pull(now);
}

void TrackerCore::pump_pull(TimePoint now) {
  const PeerKey donor = pull_->config().donor;
  while (auto t = pull_->poll_transmit()) send_relay(t->to, t->type, t->body);
  if (pull_->done()) {
    const std::uint64_t round = pull_->config().round;
    event(TrackerEvent::Kind::notice, donor,
          fmt::format("custody copy of round {} pulled: {} bytes, state {}", round,
                      pull_->state().size(), to_hex(pull_->config().state_hash).substr(0, 12)));
    custody_out_.push_back(
        CustodyCopy{.manifest = pull_->manifest(),
                    .state = std::vector<std::byte>(pull_->state().begin(), pull_->state().end())});
    last_pulled_ = std::max(last_pulled_.value_or(0), round);
    counters_.custody_pulled_bytes += pull_->state().size();
    pull_.reset();
    return;
  }
  const auto failure = pull_->failure();
  if (!failure) return;
  if (pull_->too_large()) {
    custody_off_ = *failure;
    event(TrackerEvent::Kind::notice, std::nullopt,
          fmt::format("custody off for this run: {} (--tracker.custody-max-state)", *failure));
    tell_members_run_ended();  // at the final round: no copy will come, nobody need wait
  } else if (pull_->donor_was_bad()) {
    misbehaved(now, donor, fmt::format("sent a bad custody copy: {}", *failure), false);
  } else {
    event(TrackerEvent::Kind::notice, donor,
          fmt::format("custody pull of round {}: {}", pull_->config().round, *failure));
  }
  pull_tried_.insert(donor);
  pull_.reset();
}

}  // namespace loco::proto
