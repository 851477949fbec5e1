#pragma once
// The tracker of one run as a sans-I/O state machine: admission, membership with heartbeats and
// eviction, signed membership views, rounds (quorum, group, commit, abort and retry), and the
// registry of shared-state hashes that tells out-of-sync peers where to fetch the state. No
// socket, no clock, no randomness: the driver (tracker/ over net/, or sim/) passes `now` in and
// moves the messages. docs/TRACKER_PROTOCOL.md describes the protocol it speaks.
//
// Peers are named by their authenticated identity key: the driver keeps one connection per key
// (a new connection from a key replaces the old one without a disconnect event) and reports
// on_disconnect() only when a key's current connection ends.
//
// Call order: after any on_*(), drain poll_event() first and then poll_transmit(): an event of kind
// state_changed must be saved (snapshot()) before the messages that follow it go out, so that no
// peer applies a round the tracker could forget. Then poll_timeout() is the next deadline, at
// which the driver calls on_timer(now). Extra polls are harmless.
//
// A peer's bad bytes never throw out of the core: a malformed or unexpected message becomes an
// event of kind misbehaved naming the peer (with disconnect set when the peer must be cut off),
// and the core goes on serving everyone else.
//
// Views: every membership change starts an epoch; views go out at most every view_interval, one
// signed delta (proto/view_delta.hpp) to the members that hold the last broadcast and the full
// view to those joined since, each encoded and signed once and shared by its recipients. A member
// that cannot apply a delta sends view_request and gets the full view of the last broadcast.
//
// Round lifecycle (round r = committed_round + 1):
//   peers say ready(r) → formation_time() → group(r, attempt a) to its members → each member
//   reports round_done(r, a, state hash) → commit(r, a, majority hash) → state_changed.
//   A member that leaves, is evicted, reports a failure or misses round_timeout aborts attempt a;
//   the survivors get abort(retry) and a new group (r, a + 1), or abort(no retry) below min_peers.
//   Members ready while fewer than min_peers are get abort(no retry) after join_timeout
//   (release_time()): they keep training and say ready again.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/custody_policy.hpp"
#include "loco/proto/custody_pull.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/proto/state_relay.hpp"
#include "loco/proto/tracker_config.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/proto/tracker_snapshot.hpp"
#include "loco/proto/tracker_status.hpp"

namespace loco::proto {

// One message for one peer. A broadcast (the membership view) is encoded and signed once: every
// recipient's Transmit shares the same immutable body.
struct Transmit {
  PeerKey to;
  MessageType type{};
  std::shared_ptr<const std::vector<std::byte>> body;
};

struct TrackerEvent {
  enum class Kind {
    joined,
    refused,     // a join refused (the reply says why)
    left,        // a member left, disconnected or was evicted
    misbehaved,  // a peer broke the protocol or sent a refused update
    round_formed,
    round_committed,
    round_aborted,
    state_changed,  // save snapshot() now, before the next transmit
    notice,         // anything else an operator should read
  };
  Kind kind{};
  std::optional<PeerKey> peer;
  std::string text;
  bool disconnect = false;  // close this peer's connection once its queued messages are out
};

class TrackerCore {
 public:
  // `identity` signs the membership views and must outlive the core. `restored` is the run's saved
  // state after a restart (nothing for a new run); throws Error(config) when it belongs to
  // another run id or other settings.
  TrackerCore(TrackerCoreConfig config, const secure::KeyPair& identity,
              std::optional<TrackerSnapshot> restored, TimePoint now);

  void on_message(TimePoint now, const PeerKey& from, std::uint16_t type,
                  std::span<const std::byte> body);
  void on_disconnect(TimePoint now, const PeerKey& peer);
  void on_timer(TimePoint now);

  std::optional<TrackerEvent> poll_event();
  std::optional<Transmit> poll_transmit();
  TimePoint poll_timeout() const;

  TrackerSnapshot snapshot() const;
  TrackerStatus status(TimePoint now) const;
  // Unix time in ms at TimePoint zero, for the dates of committed rounds (display only).
  void set_wall_clock(std::int64_t unix_ms_at_zero) { unix_ms_at_zero_ = unix_ms_at_zero; }
  // The members' spread (TrackerStatus::spread), shown by status() until the next report, when
  // the members send no sketches (the simulator, which reads it off their states).
  void set_spread(double rms) { counters_.spread = rms; }

  const TrackerCoreConfig& config() const { return config_; }

  // Checkpoint custody (tracker_custody.cpp). The driver stores each pulled copy (poll_custody(),
  // drained with the events) and hands the newest copy it holds to set_custody(): the core serves
  // it to a peer that must fetch the state when no live member holds it, and counts the custody
  // schedule from its round. `state` stays unchanged while the core holds it.
  std::optional<CustodyCopy> poll_custody();
  void set_custody(StateManifest manifest, std::shared_ptr<const std::vector<std::byte>> state);
  std::optional<CustodyEntry> custody() const { return custody_; }

 private:
  struct MemberRecord {
    Member member;
    TimePoint joined{};
    TimePoint last_seen{};
    std::uint64_t state_round = 0;
    Digest state_hash{};
    bool resyncing = false;  // told to fetch the state, not yet back in sync
    Heartbeat stats;
    std::uint64_t donor_load = 0;  // resyncs it was named a donor for
  };
  struct Attempt {
    std::uint32_t number = 0;
    std::vector<PeerKey> members;  // ring order
    TimePoint deadline{};
    std::map<PeerKey, Digest> done;
  };

  // Messages (tracker_core.cpp).
  void dispatch(TimePoint now, const PeerKey& from, MessageType type,
                std::span<const std::byte> body);
  void misbehaved(TimePoint now, const PeerKey& peer, const std::string& what, bool disconnect);
  template <typename M>
  void send(const PeerKey& to, const M& message) {
    transmits_.push_back(
        Transmit{.to = to,
                 .type = M::kType,
                 .body = std::make_shared<const std::vector<std::byte>>(encode(message))});
  }
  // A state-transfer message to a member over its tracker link (custody).
  void send_relay(const PeerKey& to, MessageType inner, std::span<const std::byte> body) {
    transmits_.push_back(Transmit{.to = to,
                                  .type = MessageType::state_to_peer,
                                  .body = std::make_shared<const std::vector<std::byte>>(
                                      encode_relay(MessageType::state_to_peer, inner, body))});
  }
  void event(TrackerEvent::Kind kind, std::optional<PeerKey> peer, std::string text,
             bool disconnect = false);

  // Membership (tracker_membership.cpp).
  void handle_join(TimePoint now, const PeerKey& from, const JoinRequest& request);
  std::optional<std::string> join_refusal(const PeerKey& from, const JoinRequest& request);
  void handle_heartbeat(TimePoint now, const PeerKey& from, const Heartbeat& heartbeat);
  void remove_member(TimePoint now, const PeerKey& peer, TrackerEvent::Kind kind,
                     const std::string& why, bool disconnect);
  void evict_silent(TimePoint now);
  void heard_from(const PeerKey& peer, TimePoint now);
  void membership_changed(TimePoint now);
  void flush_view(TimePoint now);
  View view() const;
  // The signed full view of the last broadcast, encoded once and shared by its recipients.
  std::shared_ptr<const std::vector<std::byte>> broadcast_body();

  // Rounds (tracker_rounds.cpp).
  std::uint64_t next_round() const { return committed_round_ + 1; }
  void handle_ready(TimePoint now, const PeerKey& from, const Ready& ready);
  void handle_round_done(TimePoint now, const PeerKey& from, const RoundDone& done);
  void handle_round_failed(TimePoint now, const PeerKey& from, const RoundFailed& failed);
  void try_form(TimePoint now);
  // When the quorum rule lets the next group form (see formation_time), ignoring `now`.
  TimePoint formation_deadline() const;
  // The quorum rule's input as of now (`now` left at its minimum).
  QuorumInput quorum_input() const;
  // Lets the ready members go when too few are ready (release_time).
  void release_if_too_few(TimePoint now);
  void start_attempt(TimePoint now, std::vector<PeerKey> group);
  void commit(TimePoint now);
  void abort_attempt(TimePoint now, const std::string& reason, const std::set<PeerKey>& excluded);
  bool in_attempt(const PeerKey& peer) const;

  // Shared state (tracker_sync.cpp).
  bool in_sync(const MemberRecord& m) const;
  bool someone_in_sync() const;
  void handle_state_report(TimePoint now, const PeerKey& from, const StateReport& report);
  void resync_out_of_sync(TimePoint now);
  void send_resync(TimePoint now, const PeerKey& peer);
  void send_resync(TimePoint now, const PeerKey& peer, std::uint64_t round, const Digest& hash);
  // Members holding (round, hash) that have served fewest resyncs.
  std::vector<Donor> pick_donors(const PeerKey& newcomer, std::uint64_t round, const Digest& hash);
  void reconcile(TimePoint now);

  // Gossip mode (tracker_gossip.cpp).
  // A healthy neighbour's state: at the round most members are at, the state most hold.
  std::optional<HeldState> healthy_state() const;
  // Tells `peer` to copy a healthy state if it is more than gossip_max_lag rounds behind it, or
  // at round 0 behind it at all.
  void catch_up_if_behind(TimePoint now, const PeerKey& peer);
  // Members' state reports raise the frontier; a change broadcast now takes effect in groupings
  // from this round.
  void gossip_state_reported(std::uint64_t round);
  std::uint64_t gossip_change_round() const;
  // The round most members train for: the median of their state rounds, plus one. Recomputed at
  // most once a second (a pass over the members; heartbeats come hundreds a second).
  std::uint64_t gossip_next_round(TimePoint now);
  // Gives the members admitted since the last broadcast their first round.
  void stamp_admitted_members();

  // Checkpoint custody (tracker_custody.cpp).
  bool custody_serves() const;  // the custody copy is the run's committed state
  bool state_available() const { return someone_in_sync() || custody_serves(); }
  void handle_state_relay(TimePoint now, const PeerKey& from, const StateRelay& relay);
  void custody_timer(TimePoint now);
  TimePoint custody_deadline() const;
  void start_pull(TimePoint now);
  void pump_pull(TimePoint now);

  TrackerCoreConfig config_;
  const secure::KeyPair& identity_;
  Digest settings_digest_{};
  std::int64_t unix_ms_at_zero_ = 0;

  std::map<PeerKey, MemberRecord> members_;
  std::set<std::pair<TimePoint, PeerKey>> silence_deadlines_;  // last_seen + eviction_timeout
  std::vector<bool> shard_taken_;
  std::uint64_t epoch_ = 0;
  bool view_dirty_ = false;
  TimePoint view_sent_at_ = TimePoint::min();
  // Views go out at most every view_interval (flush_view): members that hold the last broadcast
  // get a signed delta from it, newcomers since then (and a member that asks) the full view.
  View broadcast_;                                                // epoch 0: none yet
  std::shared_ptr<const std::vector<std::byte>> broadcast_full_;  // broadcast_, once encoded
  std::set<PeerKey> newcomers_;
  std::uint64_t gossip_frontier_ = 0;  // the newest round any member has reported (gossip mode)
  std::uint64_t gossip_next_round_ = 0;
  std::optional<TimePoint> gossip_next_round_at_;

  std::optional<Digest> genesis_;
  std::uint64_t committed_round_ = 0;
  Digest committed_hash_{};
  std::vector<RoundRecord> history_;
  TimePoint reconcile_after_{};  // a restarted tracker waits this long for its peers to return

  std::map<PeerKey, ReadyEntry> ready_;  // for next_round()
  std::set<PeerKey> refused_;            // updates refused for next_round(): not waited for
  TimePoint first_ready_ = kNever;
  std::vector<PeerKey> previous_group_;
  std::optional<Attempt> attempt_;
  float median_norm_ = 0;                  // of the updates of the round being formed or run
  std::uint32_t attempts_this_round_ = 0;  // since the last give-up: bounded by max_attempts
  std::uint32_t last_attempt_number_ = 0;  // of next_round(): never reused, give-ups or not

  std::optional<CustodyEntry> custody_;  // the newest copy the driver holds
  StateServer custody_server_;
  std::shared_ptr<const std::vector<std::byte>> custody_state_;
  std::optional<std::uint64_t> last_pulled_;  // custody schedule: the newest round pulled or held
  std::unique_ptr<CustodyPull> pull_;
  std::set<PeerKey> pull_tried_;  // donors that failed for the round being pulled
  std::uint64_t pull_round_ = 0;  // of pull_tried_
  TimePoint pull_after_{};        // no new pull before this (settle, or after a pass failed)
  Duration pull_backoff_{};       // the wait after the next failed pass
  std::optional<std::string> custody_off_;  // why custody stopped for this process (size)
  std::deque<CustodyCopy> custody_out_;

  std::deque<TrackerEvent> events_;
  std::deque<Transmit> transmits_;
  TrackerStatus counters_;  // the counting fields of status()
};

}  // namespace loco::proto
