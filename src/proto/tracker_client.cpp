#include "loco/proto/tracker_client.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"
#include "loco/proto/state_relay.hpp"

namespace loco::proto {
namespace {

// Before the join reply says otherwise, the tracker counts as lost after this much silence.
constexpr Duration kJoinReplyTimeout = std::chrono::seconds(30);

// Which failure of a pass over the addresses judges it: a silent or a full tracker breaks a row,
// a cut handshake is an answer (another run's tracker), and nothing listening is the least.
int severity(ConnectFailure failure) {
  switch (failure) {
    case ConnectFailure::unreachable: return 0;
    case ConnectFailure::cut_in_handshake: return 1;
    case ConnectFailure::unanswered:
    case ConnectFailure::turned_away: return 2;
    case ConnectFailure::not_pinned: return 3;
  }
  return 0;
}

}  // namespace

TrackerClient::TrackerClient(TrackerClientConfig config) : config_(std::move(config)) {}

void TrackerClient::on_connected(TimePoint now) {
  connected_ = true;
  failures_in_a_row_ = 0;
  pass_attempts_ = 0;
  joined_ = false;
  view_requested_ = false;  // the tracker sends a newcomer the full view
  transmits_.clear();       // anything queued for the old connection is void
  send(config_.join);
  tracker_deadline_ = now + kJoinReplyTimeout;
  next_heartbeat_ = kNever;
}

void TrackerClient::on_disconnect(TimePoint /*now*/) {
  connected_ = false;
  joined_ = false;
  next_heartbeat_ = kNever;
  tracker_deadline_ = kNever;
  transmits_.clear();
}

void TrackerClient::on_connect_failed(TimePoint now, ConnectFailure failure,
                                      const std::string& why) {
  if (was_member_ || gave_up_) return;
  if (failure == ConnectFailure::not_pinned) {
    emit(ClientEvent::Kind::refused,
         fmt::format("{}; check [tracker] public-key: it must be the key the tracker printed "
                     "(another key is another tracker, or a man in the middle)",
                     why))
        .cause = ErrorCategory::crypto;
    gave_up_ = true;
    return;
  }
  if (pass_attempts_ == 0) pass_began_ = now;
  if (pass_attempts_ == 0 || severity(failure) > severity(pass_worst_)) pass_worst_ = failure;
  if (++pass_attempts_ < std::max<std::size_t>(config_.addresses, 1)) return;
  pass_attempts_ = 0;
  const ConnectFailure verdict = pass_worst_;
  failures_in_a_row_ =
      failures_in_a_row_ > 0 && verdict == last_failure_ ? failures_in_a_row_ + 1 : 1;
  if (failures_in_a_row_ == 1) row_began_ = pass_began_;
  last_failure_ = verdict;
  switch (verdict) {
    case ConnectFailure::cut_in_handshake:
      if (failures_in_a_row_ < kCutsToGiveUp) return;
      emit(ClientEvent::Kind::refused,
           fmt::format("the tracker ended the handshake without a word ({}), as a tracker of "
                       "another run does: check [run] id \"{}\" (or the tracker runs another "
                       "loco version, or refuses this address: its log says which); {}",
                       in_a_row(now, "times"), config_.run_id, why))
          .cause = ErrorCategory::config;
      break;
    case ConnectFailure::unreachable:
      if (failures_in_a_row_ < kUnreachableToGiveUp) return;
      if (config_.addresses > 1 && now - row_began_ < kReplicaPatience) return;
      emit(ClientEvent::Kind::refused,
           fmt::format("no connection to the tracker ({}): {}; check [tracker] address and that "
                       "the tracker runs{}",
                       in_a_row(now, "tries"), why,
                       config_.addresses > 1 ? " (only the leading replica listens)" : ""))
          .cause = ErrorCategory::network;
      break;
    case ConnectFailure::not_pinned:
    case ConnectFailure::unanswered:
    case ConnectFailure::turned_away: return;
  }
  gave_up_ = true;
}

std::string TrackerClient::in_a_row(TimePoint now, std::string_view attempts) const {
  if (config_.addresses <= 1) return fmt::format("{} {} in a row", failures_in_a_row_, attempts);
  return fmt::format("{} passes in a row over its {} addresses, {:.1f} s", failures_in_a_row_,
                     config_.addresses, std::chrono::duration<double>(now - row_began_).count());
}

void TrackerClient::on_message(TimePoint now, std::uint16_t type, std::span<const std::byte> body) {
  if (!connected_) return;
  const auto known = message_info(type);
  try {
    if (!known) throw Error(ErrorCategory::protocol, fmt::format("unknown type {:#06x}", type));
    handle(now, known->type, body);
  } catch (const Error& e) {
    emit(
        ClientEvent::Kind::tracker_error,
        fmt::format("the tracker sent a bad {}: {}", known ? known->name : "message", e.message()));
  }
}

void TrackerClient::handle(TimePoint now, MessageType type, std::span<const std::byte> body) {
  if (joined_) tracker_deadline_ = now + std::chrono::milliseconds(reply_.eviction_ms);
  switch (type) {
    case MessageType::join_reply: {
      reply_ = decode<JoinReply>(body);
      if (!reply_.accepted) {
        gave_up_ = true;
        // The tracker's word: printable, at most kMaxTextBytes (read_text checked both).
        emit(ClientEvent::Kind::refused, "the tracker refused this peer: " + reply_.refusal);
        return;
      }
      joined_ = true;
      was_member_ = true;
      tracker_deadline_ = now + std::chrono::milliseconds(reply_.eviction_ms);
      next_heartbeat_ = now + std::chrono::milliseconds(reply_.heartbeat_ms);
      emit(ClientEvent::Kind::joined).reply = reply_;
      return;
    }
    case MessageType::heartbeat_ack: next_round_ = decode<HeartbeatAck>(body).next_round; return;
    case MessageType::view: {
      View v =
          open_signed_view(body, config_.tracker_key, config_.run_id, config_.signature_memo.get());
      if (v.epoch <= view_.epoch && !view_.members.empty()) return;  // stale or repeated
      roster_.record(view_.members, v, 0);
      view_ = std::move(v);
      view_digest_ = MembersDigest::of(view_.members, config_.lanes_memo.get());
      ++view_changes_;
      view_requested_ = false;
      emit(ClientEvent::Kind::view).view_epoch = view_.epoch;
      return;
    }
    case MessageType::view_delta: {
      const ViewDelta delta = open_signed_view_delta(body, config_.tracker_key, config_.run_id,
                                                     config_.signature_memo.get());
      if (delta.epoch <= view_.epoch && !view_.members.empty()) return;  // stale or repeated
      std::vector<Member> replaced;  // the entries the delta removes or changes, as they were
      for (const PeerKey& key : delta.removed)
        if (const Member* m = member(key)) replaced.push_back(*m);
      for (const Member& changed : delta.changed)
        if (const Member* m = member(changed.key)) replaced.push_back(*m);
      if (view_.members.empty() ||
          !apply_view_delta(view_, view_digest_, delta, config_.lanes_memo.get())) {
        if (!view_requested_) send(ViewRequest{});  // a gap: the full view rebuilds it
        view_requested_ = true;
        return;
      }
      ++view_changes_;
      roster_.record(replaced, view_, delta.removed_from_round);
      emit(ClientEvent::Kind::view).view_epoch = view_.epoch;
      return;
    }
    case MessageType::group: emit(ClientEvent::Kind::group).group = decode<Group>(body); return;
    case MessageType::commit: emit(ClientEvent::Kind::commit).commit = decode<Commit>(body); return;
    case MessageType::abort_round:
      emit(ClientEvent::Kind::abort_round).abort = decode<AbortRound>(body);
      return;
    case MessageType::resync: emit(ClientEvent::Kind::resync).resync = decode<Resync>(body); return;
    case MessageType::run_ended:
      emit(ClientEvent::Kind::run_ended).run_ended = decode<RunEnded>(body);
      return;
    case MessageType::judge_call:
      emit(ClientEvent::Kind::judge_call).judge_call = decode_judge_call(body);
      return;
    case MessageType::state_to_peer: {
      const StateRelay relay = decode_relay(type, body);
      ClientEvent& e = emit(ClientEvent::Kind::state_relay);
      e.relay_type = relay.inner;
      e.relay_body.assign(relay.body.begin(), relay.body.end());
      return;
    }
    default:
      throw Error(ErrorCategory::protocol,
                  fmt::format("{}, which only peers send", info(type).name));
  }
}

void TrackerClient::on_timer(TimePoint now) {
  if (!connected_) return;
  if (now >= tracker_deadline_) {
    tracker_deadline_ = kNever;
    emit(ClientEvent::Kind::tracker_lost, joined_ ? "the tracker stopped answering heartbeats"
                                                  : "the tracker did not answer the join request");
    return;
  }
  if (joined_ && now >= next_heartbeat_) {
    send(stats_);
    next_heartbeat_ = now + std::chrono::milliseconds(reply_.heartbeat_ms);
  }
}

TimePoint TrackerClient::poll_timeout() const {
  if (!connected_) return kNever;
  return std::min(tracker_deadline_, joined_ ? next_heartbeat_ : kNever);
}

void TrackerClient::set_state(std::uint64_t round, const Digest& hash) {
  config_.join.state_round = round;
  config_.join.state_hash = hash;
  stats_.state_round = round;
}

void TrackerClient::set_tentative(std::uint64_t round, const Digest& hash) {
  config_.join.tentative_round = round;
  config_.join.tentative_hash = round == 0 ? Digest{} : hash;
}

void TrackerClient::set_stats(const Heartbeat& stats) {
  stats_ = stats;
  stats_.state_round = config_.join.state_round;
}

void TrackerClient::ready(const Ready& message) {
  if (joined_) send(message);
}
void TrackerClient::round_done(const RoundDone& message) {
  if (joined_) send(message);
}
void TrackerClient::round_failed(const RoundFailed& message) {
  if (joined_) send(message);
}
void TrackerClient::proven_misconduct(const ProvenMisconduct& message) {
  if (joined_) send(message);
}
void TrackerClient::verdict(const Verdict& message) {
  if (joined_) send(message);
}
void TrackerClient::report(const MisbehaviourReport& message) {
  if (joined_) send(message);
}
void TrackerClient::state_report() {
  if (joined_)
    send(StateReport{.round = config_.join.state_round, .state_hash = config_.join.state_hash});
}
void TrackerClient::relay(MessageType type, std::span<const std::byte> body) {
  if (joined_)
    transmits_.push_back(Outgoing{.type = MessageType::state_to_tracker,
                                  .body = encode_relay(MessageType::state_to_tracker, type, body)});
}
void TrackerClient::leave(const std::string& reason) {
  if (joined_) send(Leave{.reason = reason});
}

const Member* TrackerClient::member(const secure::PublicKey& key) const {
  return find_member(view_, key);
}

ClientEvent& TrackerClient::emit(ClientEvent::Kind kind, std::string text) {
  ClientEvent& e = events_.emplace_back();
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

template <typename M>
void TrackerClient::send(const M& message) {
  transmits_.push_back(Outgoing{.type = M::kType, .body = encode(message)});
}

std::optional<ClientEvent> TrackerClient::poll_event() {
  if (events_.empty()) return std::nullopt;
  ClientEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<TrackerClient::Outgoing> TrackerClient::poll_transmit() {
  if (transmits_.empty()) return std::nullopt;
  Outgoing o = std::move(transmits_.front());
  transmits_.pop_front();
  return o;
}

}  // namespace loco::proto
