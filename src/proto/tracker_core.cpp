// TrackerCore: construction, message dispatch, timers and outputs. Membership, rounds and the
// shared-state registry are in tracker_membership.cpp, tracker_rounds.cpp and tracker_sync.cpp.

#include "loco/proto/tracker_core.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {

TrackerCore::TrackerCore(TrackerCoreConfig config, const secure::KeyPair& identity,
                         std::optional<TrackerSnapshot> restored, TimePoint now)
    : config_(std::move(config)),
      identity_(identity),
      settings_digest_(proto::settings_digest(config_.settings)),
      shard_taken_(config_.shard_count, false) {
  latest_now_ = now;
  last_commit_at_ = now;
  quorum_wait_from_ = now;
  if (config_.shard_count == 0)
    throw Error(ErrorCategory::config, "the run needs at least one data shard");
  if (config_.genesis == Digest{})
    throw Error(ErrorCategory::config, "the tracker needs the run's genesis hash");
  committed_hash_ = config_.genesis;
  for (const Setting& s : config_.settings)
    if (s.name == "strategy.all-reduce" && s.value == "ring")
      relay_links_ = RelayLinks::ring_neighbours;
  if (config_.gossip_round_lead == 0)
    throw Error(ErrorCategory::config,
                "gossip_round_lead must be at least 1: a change cannot take effect in a round "
                "members may have started");
  if (!restored) return;
  if (restored->run_id != config_.run_id)
    throw Error(ErrorCategory::config,
                fmt::format("the tracker's state file belongs to run '{}', not '{}': give each run "
                            "its own state file",
                            restored->run_id, config_.run_id));
  if (restored->settings_digest != settings_digest_)
    throw Error(ErrorCategory::config,
                "the tracker's state file was written under other run settings (model, seed, "
                "codec, strategy): a run's settings cannot change; start a new run id, or restore "
                "the settings");
  if (restored->genesis && *restored->genesis != config_.genesis)
    throw Error(ErrorCategory::config,
                fmt::format("the tracker's state file belongs to a run that started from state {}, "
                            "and these settings start from {}: another model initialisation (seed, "
                            "init file, loco release)",
                            to_hex(*restored->genesis).substr(0, 12),
                            to_hex(config_.genesis).substr(0, 12)));
  // Above any epoch the last process can have issued after it last saved, so that peers, which
  // refuse a view older than one they hold, take this process's views.
  epoch_ = restored->epoch + (std::uint64_t{1} << 32);
  committed_round_ = restored->committed_round;
  committed_hash_ = restored->committed_hash;
  lost_rounds_ = restored->lost_rounds;
  history_ = std::move(restored->history);
  restore_held_against(now, *restored);
  // Peers of the run reconnect over the next seconds; until then, nobody holding the committed
  // state is not yet a reason to fall back on another state (see reconcile()).
  reconcile_after_ = now + config_.eviction_timeout;
  await_last_view(now, *restored);
}

// A token bucket per connection: `message_burst` messages, refilled at `message_rate` a second.
bool TrackerCore::spend_message(TimePoint now, const PeerKey& peer) {
  if (config_.message_rate <= 0) return true;
  const auto [it, fresh] = budgets_.try_emplace(
      peer, MessageBudget{.left = static_cast<double>(config_.message_burst), .refilled = now});
  MessageBudget& b = it->second;
  const double elapsed = std::chrono::duration<double>(now - b.refilled).count();
  b.left = std::min(static_cast<double>(config_.message_burst),
                    b.left + std::max(0.0, elapsed) * config_.message_rate);
  b.refilled = now;
  if (b.left < 1) return false;
  b.left -= 1;
  return true;
}

void TrackerCore::on_message(TimePoint now, const PeerKey& from, std::uint16_t type,
                             std::span<const std::byte> body) {
  quorum_memo_.reset();
  latest_now_ = std::max(latest_now_, now);
  forgive_own_stall(now);
  if (!spend_message(now, from)) {
    misbehaved(now, from,
               fmt::format("sent more than {} messages at once ({} a second)",
                           config_.message_burst, config_.message_rate),
               true);
    budgets_.erase(from);
    on_timer(now);
    return;
  }
  const auto known = message_info(type);
  if (!known) {
    misbehaved(now, from, fmt::format("sent a message of unknown type {:#06x}", type), true);
    return;
  }
  try {
    dispatch(now, from, known->type, body);
  } catch (const Error& e) {
    misbehaved(now, from, fmt::format("sent a bad {}: {}", known->name, e.message()), true);
  }
  on_timer(now);
}

// Each message a peer may send, decoded (Error(format) reaches on_message) and handed on.
void TrackerCore::dispatch(TimePoint now, const PeerKey& from, MessageType type,
                           std::span<const std::byte> body) {
  if (type == MessageType::join_request) {
    handle_join(now, from, decode<JoinRequest>(body));
    return;
  }
  if (!members_.contains(from)) {
    misbehaved(now, from, fmt::format("sent a {} without having joined", info(type).name), true);
    return;
  }
  heard_from(from, now);
  switch (type) {
    case MessageType::heartbeat: handle_heartbeat(now, from, decode<Heartbeat>(body)); break;
    case MessageType::leave:
      remove_member(now, from, TrackerEvent::Kind::left,
                    fmt::format("left: {}", decode<Leave>(body).reason), true);
      break;
    case MessageType::ready: handle_ready(now, from, decode<Ready>(body)); break;
    case MessageType::round_done: handle_round_done(now, from, decode<RoundDone>(body)); break;
    case MessageType::round_failed:
      handle_round_failed(now, from, decode<RoundFailed>(body));
      break;
    case MessageType::misconduct_proof:
      handle_proven_misconduct(now, from, decode<ProvenMisconduct>(body));
      break;
    case MessageType::verdict: handle_verdict(now, from, decode_verdict(body)); break;
    case MessageType::state_report:
      handle_state_report(now, from, decode<StateReport>(body));
      break;
    case MessageType::state_to_tracker:
      handle_state_relay(now, from, decode_relay(type, body));
      break;
    case MessageType::view_request: {
      (void)decode<ViewRequest>(body);
      // The full view the next delta builds on, once per broadcast (an honest member asks again
      // only after a later delta); a newcomer not yet sent one gets it with the next broadcast.
      std::uint64_t& answered = members_.at(from).full_view_epoch;
      if (broadcast_.epoch != 0 && !newcomers_.contains(from) && answered != broadcast_.epoch) {
        answered = broadcast_.epoch;
        transmits_.push_back(
            Transmit{.to = from, .type = MessageType::view, .body = broadcast_body()});
      }
      break;
    }
    case MessageType::misbehaviour_report: {
      // A claim, not a fact: logged about the reporter, so that one member's reports are tallied
      // together however many keys they name.
      const auto report = decode<MisbehaviourReport>(body);
      const bool member = members_.contains(report.suspect);
      if (member) ++counters_.misbehaviours;
      event(TrackerEvent::Kind::reported, from,
            fmt::format("reported {}{}: {}", secure::short_id(report.suspect),
                        member ? "" : " (not a member)", report.reason));
      break;
    }
    default:
      misbehaved(now, from, fmt::format("sent a {}, which only the tracker sends", info(type).name),
                 true);
  }
}

void TrackerCore::on_connected(const PeerKey& peer, std::string network) {
  quorum_memo_.reset();
  networks_[peer] = std::move(network);
}

void TrackerCore::on_disconnect(TimePoint now, const PeerKey& peer) {
  quorum_memo_.reset();
  latest_now_ = std::max(latest_now_, now);
  networks_.erase(peer);
  budgets_.erase(peer);
  custody_server_.forget(peer);
  if (members_.contains(peer))
    remove_member(now, peer, TrackerEvent::Kind::left, "connection lost", false);
  on_timer(now);
}

void TrackerCore::on_timer(TimePoint now) {
  quorum_memo_.reset();
  latest_now_ = std::max(latest_now_, now);
  forgive_own_stall(now);
  evict_silent(now);
  if (attempt_) decide(now);  // a report grace or the round timeout may have passed
  if (pending_retry_ && now >= pending_retry_->deadline) settle_accusation(now);
  judging_timer(now);
  reconcile(now);
  restart_grace_timer(now);
  custody_timer(now);
  probe_timer(now);
  try_form(now);
  if (view_dirty_ && now >= next_view_at()) flush_view(now);
}

TimePoint TrackerCore::poll_timeout() const {
  TimePoint next = kNever;
  if (!silence_deadlines_.empty()) next = silence_deadlines_.begin()->first;
  if (attempt_) {
    next = std::min(next, attempt_->deadline);
    if (attempt_->majority_at != kNever)
      next = std::min(next, attempt_->majority_at + config_.report_grace);
  }
  if (pending_retry_) next = std::min(next, pending_retry_->deadline);
  next = std::min(next, judging_deadline());
  if (view_dirty_) next = std::min(next, next_view_at());
  // reconcile() waits for a running attempt or retry to end (their deadlines are above).
  if (!config_.gossip && !members_.empty() && !state_available() && !attempt_ && !pending_retry_)
    next = std::min(next, reconcile_after_);
  next = std::min(next, custody_deadline());
  next = std::min(next, probe_deadline());
  if (!awaited_.empty()) next = std::min(next, awaited_until_);
  // Nobody ready: no group forms and nobody is let go (and the quorum's input costs O(members)).
  if (!attempt_ && !pending_retry_ && !ready_.empty()) {
#ifndef NDEBUG
    if (quorum_memo_) {  // the check is not the core's work: its pass is not counted
      const std::uint64_t walked = quorum_members_walked_;
      LOCO_ASSERT(*quorum_memo_ == quorum_input(),
                  "the quorum's input changed after try_form() without a new input");
      quorum_members_walked_ = walked;
    }
#endif
    const QuorumInput in = quorum_memo_ ? *quorum_memo_ : quorum_input();
    next = std::min({next, formation_deadline(in), release_time(in), vain_wait_end(in)});
  }
  return next;
}

std::optional<TrackerEvent> TrackerCore::poll_event() {
  if (events_.empty()) return std::nullopt;
  TrackerEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<Transmit> TrackerCore::poll_transmit() {
  if (transmits_.empty()) return std::nullopt;
  Transmit t = std::move(transmits_.front());
  transmits_.pop_front();
  return t;
}

void TrackerCore::event(TrackerEvent::Kind kind, std::optional<PeerKey> peer, std::string text,
                        bool disconnect) {
  events_.push_back(
      TrackerEvent{.kind = kind, .peer = peer, .text = std::move(text), .disconnect = disconnect});
}

void TrackerCore::misbehaved(TimePoint now, const PeerKey& peer, const std::string& what,
                             bool disconnect) {
  ++counters_.misbehaviours;
  if (disconnect) bar(now, peer);
  if (disconnect && members_.contains(peer)) {
    // Cut off: no longer a member either (its round, if any, goes on without it).
    event(TrackerEvent::Kind::misbehaved, peer, what);
    remove_member(now, peer, TrackerEvent::Kind::left, "removed after misbehaving", true);
    return;
  }
  event(TrackerEvent::Kind::misbehaved, peer, what, disconnect);
}

TrackerSnapshot TrackerCore::snapshot() const {
  TrackerSnapshot s{.run_id = config_.run_id,
                    .settings_digest = settings_digest_,
                    .genesis = config_.genesis,
                    .epoch = epoch_,
                    .committed_round = committed_round_,
                    .committed_hash = committed_hash_,
                    .history = history_,
                    .lost_rounds = lost_rounds_,
                    .barred = {},
                    .benched = {},
                    .disputes = {},
                    .members = {}};
  for (const auto& [key, until] : barred_)
    if (until > latest_now_)
      s.barred.push_back(BarredKey{
          key, static_cast<std::uint64_t>(
                   std::chrono::ceil<std::chrono::milliseconds>(until - latest_now_).count())});
  // A bench counts round attempts, which the file does not keep: it is saved as the round it ends
  // at if every attempt from now commits, and a restarted tracker counts it on from there.
  for (const auto& [key, b] : benched_)
    if (b.until >= next_round_attempt())
      s.benched.push_back(
          BenchedKey{key, next_round() + (b.until - next_round_attempt()), b.times});
  for (const auto& [a, partners] : disputes_)
    for (const PeerKey& b : partners)
      if (a < b) s.disputes.push_back(DisputedPair{a, b});
  // Those still awaited after a restart too: a tracker that restarts again within the grace
  // waits for them as well.
  std::set<PeerKey> members(awaited_);
  for (const auto& [key, m] : members_) members.insert(key);
  s.members.assign(members.begin(), members.end());
  return s;
}

void TrackerCore::restore_held_against(TimePoint now, const TrackerSnapshot& restored) {
  // A file is trusted no further than the settings allow: no bar longer than bar_time, no bench
  // doubled more than bench() doubles.
  const auto bar_ms = static_cast<std::uint64_t>(
      std::chrono::ceil<std::chrono::milliseconds>(config_.bar_time).count());
  for (const BarredKey& b : restored.barred)
    barred_[b.key] = now + std::chrono::milliseconds(std::min(b.remaining_ms, bar_ms));
  for (const BenchedKey& b : restored.benched)
    if (b.until >= next_round())
      benched_[b.key] =
          Bench{.until = next_round_attempt() +
                         std::min(b.until - next_round(),
                                  std::uint64_t{config_.accusation_bench_rounds} << 10),
                .times = std::min<std::uint32_t>(b.times, 11)};
  for (const DisputedPair& d : restored.disputes) {
    if (disputes_.size() + 2 > kMaxBarred) break;
    disputes_[d.first].insert(d.second);
    disputes_[d.second].insert(d.first);
  }
}

TrackerStatus TrackerCore::status(TimePoint now) const {
  TrackerStatus s = counters_;
  s.run_id = config_.run_id;
  s.epoch = epoch_;
  s.committed_round = committed_round_;
  s.committed_hash = to_hex(committed_hash_);
  s.next_round = next_round();
  s.final_round = config_.final_round;
  s.run_ended = run_over();
  if (run_over()) {
    s.phase = fmt::format("the run ended at round {}{}", committed_round_,
                          custody_serves()       ? ": its model is in the tracker's custody"
                          : final_state_unkept() ? ""
                                                 : ": taking custody of its model");
  } else if (attempt_) {
    s.phase = fmt::format("round {} running (attempt {})", next_round(), attempt_->number);
    s.attempt = attempt_->number;
  } else if (pending_retry_) {
    s.phase = fmt::format("round {}: a retry waits for the members' reports", next_round());
  } else if (!ready_.empty()) {
    s.phase = fmt::format("forming round {} ({} of {} ready)", next_round(), ready_.size(),
                          members_.size());
  } else {
    s.phase = members_.empty() ? "waiting for peers" : "peers training";
  }
  const auto seconds = [](Duration d) { return std::chrono::duration<double>(d).count(); };
  if (const std::optional<Duration> phase = round_phase()) s.round_seconds = seconds(*phase);
  std::vector<ParameterSketch> sketches;  // gossip mode: the members' last, for the spread
  for (const auto& [key, m] : members_) {
    if (m.stats.sketch) sketches.push_back(*m.stats.sketch);
    s.members.push_back(MemberStatus{.peer_id = secure::short_id(key),
                                     .public_key = secure::to_hex(key),
                                     .address = m.member.address,
                                     .shard = m.member.shard,
                                     .joined_s_ago = seconds(now - m.joined),
                                     .last_seen_s_ago = seconds(now - m.last_seen),
                                     .state_round = m.state_round,
                                     .in_sync = in_sync(m),
                                     .in_round = in_attempt(key),
                                     .reachability = m.member.reachability,
                                     .last = m.stats});
    if (m.member.reachability == Reachability::reachable) ++s.members_reachable;
    if (m.member.reachability == Reachability::unreachable) ++s.members_unreachable;
    s.bytes_sent += m.stats.bytes_sent;
    s.bytes_received += m.stats.bytes_received;
    s.bytes_relayed += m.stats.bytes_relayed;
    s.tokens_per_s += m.stats.tokens_per_s;
  }
  if (sketches.size() >= 2) s.spread = sketch_spread(sketches);
  s.history = history_;
  s.lost_rounds = lost_rounds_;
  if (custody_) {
    s.custody_round = custody_->round;
    s.custody_state_bytes = custody_->bytes;
  }
  return s;
}

}  // namespace loco::proto
