#pragma once
// A peer's side of the tracker protocol, sans-I/O: it joins, sends heartbeats, checks every
// membership view against the pinned tracker key, and turns the tracker's messages into events
// for the peer's training loop; the loop answers through ready(), round_done(), ... The driver
// (net/, or sim/) owns the connection: it calls on_connected() once the secure connection to the
// tracker is up, feeds on_message(), and reports on_disconnect(). After the connection is lost
// the client joins again on the next on_connected(), with the state it holds then.
//
// Call order: after any on_*() or any of the peer's calls, drain poll_event() and poll_transmit();
// poll_timeout() is the next deadline for on_timer(now). Extra polls are harmless.
//
// The tracker is trusted to run the run, not to be well-formed: a message that does not decode,
// or a view whose signature does not verify under the pinned key, becomes an event of kind
// tracker_error (the driver drops the connection and reconnects); views older than the one held
// are ignored. A view delta (view_delta.hpp) is applied to the view held; one that does not apply
// (another base, a digest that differs) makes the client ask for the full view (view_request),
// once until a full view comes.
//
// Joining fails fast, and says why (on_connect_failed): until this client has joined once, a
// handshake that shows a key other than the pinned one ends the join at once (cause crypto: a
// wrong [tracker] public-key, or a man in the middle). The other failures are judged by whole
// passes over the tracker's addresses (`addresses` of them, tried in turn: replicas, of which
// only the leader listens), each pass by its worst attempt: a pass with a handshake not answered
// in time (a silent tracker: the owner's patience to judge) or a tracker that completed the
// handshake and turned the peer away (full: retried) breaks a row; one where a tracker
// ended the handshake without a word, as one of another run does, is a cut pass, and
// kCutsToGiveUp of them in a row end the join (cause config); one where no connection could be
// made to any address is an unreachable pass, and kUnreachableToGiveUp of them in a row end it
// (cause network), with several addresses not before kReplicaPatience since the row began (a
// peer that starts while the leader is gone waits out an election). Once joined, the client never
// gives up: a tracker that restarts is reconnected to for as long as it takes.

#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "loco/core/error.hpp"
#include "loco/core/time.hpp"
#include "loco/proto/gossip_roster.hpp"
#include "loco/proto/judge_messages.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "loco/proto/view_delta.hpp"

namespace loco::proto {

struct TrackerClientConfig {
  std::string run_id;
  secure::PublicKey tracker_key;  // pinned
  // state_round and state_hash are filled from set_state(), the tentative state from
  // set_tentative().
  JoinRequest join;
  // Shared by the clients of one process that are handed the same views (the simulator's peers):
  // each signature is then checked once. None: each view is checked.
  std::shared_ptr<secure::SignatureMemo> signature_memo{};
  // Shared as signature_memo is: each member entry of those views is hashed once for the digest.
  std::shared_ptr<MemberLanesMemo> lanes_memo{};
  // How many addresses the driver tries in turn (one, or each replica's): a pass over them is
  // the unit on_connect_failed() counts.
  std::size_t addresses = 1;
};

// How an attempt to connect to the tracker failed before the connection was up (the driver's
// classification of the error).
enum class ConnectFailure {
  unreachable,       // no connection could be made: nothing listens there, or no route
  cut_in_handshake,  // the tracker ended the handshake without a word (another run's id)
  not_pinned,        // the handshake showed a key other than the pinned one, or did not verify
  unanswered,        // the handshake did not finish in time: a silent tracker (no verdict)
  turned_away,       // the handshake completed, then the tracker closed (full): it lives
};

struct ClientEvent {
  enum class Kind {
    joined,       // accepted: `reply` has the shard and the timers
    refused,      // this peer cannot join: `text` says why ("the tracker refused this peer: "
                  // and its reason, or the client's judgement) and `cause` by what; no retry
    view,         // a newer membership view, the client's view(): its epoch in `view_epoch`
    group,        // this peer is in a round's group: `group`
    commit,       // apply the round: `commit`
    abort_round,  // `abort`
    resync,       // fetch the state: `resync`
    state_relay,  // a state-transfer message from the tracker (custody): `relay_type`, `relay_body`
    run_ended,    // the run's final round is committed, kept by the tracker or not: `run_ended`
    judge_call,   // a dispute of a round this peer took part in is judged: `judge_call`
    tracker_lost,   // silent past the eviction time: the driver reconnects
    tracker_error,  // a malformed or forged message: `text`; the driver reconnects
  };
  Kind kind{};
  std::string text{};
  // With refused: config (the tracker's refusal, or its handshake ended: another run), crypto
  // (not the pinned key), network (nothing to connect to).
  ErrorCategory cause = ErrorCategory::config;
  JoinReply reply{};
  // Not the view itself: a copy of 1,000 members per change per peer was 4% of the simulator's
  // 1,000-peer hour, and the peer reads view() when it needs it.
  std::uint64_t view_epoch = 0;
  Group group{};
  Commit commit{};
  AbortRound abort{};
  Resync resync{};
  RunEnded run_ended{};
  JudgeCall judge_call{};
  MessageType relay_type{};
  std::vector<std::byte> relay_body{};
};

class TrackerClient {
 public:
  explicit TrackerClient(TrackerClientConfig config);

  // Connection.
  void on_connected(TimePoint now);
  void on_message(TimePoint now, std::uint16_t type, std::span<const std::byte> body);
  void on_disconnect(TimePoint now);
  // An attempt that never reached on_connected(); `why` is the driver's error message.
  void on_connect_failed(TimePoint now, ConnectFailure failure, const std::string& why);
  void on_timer(TimePoint now);

  // Passes in a row, before the first join, after which a failure ends the join.
  static constexpr int kCutsToGiveUp = 3;
  static constexpr int kUnreachableToGiveUp = 4;
  // With several addresses, the least time unreachable passes take to end the join: longer than
  // a failover at the default 3 s lease (the lease, a follower's 250 ms look, the state's load).
  static constexpr Duration kReplicaPatience = std::chrono::seconds(10);

  // What the peer tells the tracker.
  void set_state(std::uint64_t round, const Digest& hash);  // the state the peer now holds
  // The state it computed for a round it reported done and was not told the outcome of (round 0:
  // none): said at each join (JoinRequest::tentative_round), so that a tracker that committed it
  // and never announced it tells the peer to commit it.
  void set_tentative(std::uint64_t round, const Digest& hash);
  void set_stats(const Heartbeat& stats);  // sent with the next heartbeat
  void ready(const Ready& ready);
  void round_done(const RoundDone& done);
  void round_failed(const RoundFailed& failed);
  void proven_misconduct(const ProvenMisconduct& proof);
  void verdict(const Verdict& verdict);  // this peer judged a dispute (segment_judge.hpp)
  void report(const MisbehaviourReport& report);
  void state_report();  // the state set_state() holds, after a resync
  // A state-transfer message to the tracker (serving its custody pull, or fetching its copy).
  void relay(MessageType type, std::span<const std::byte> body);
  void leave(const std::string& reason);

  std::optional<ClientEvent> poll_event();
  struct Outgoing {
    MessageType type{};
    std::vector<std::byte> body;
  };
  std::optional<Outgoing> poll_transmit();
  TimePoint poll_timeout() const;

  bool joined() const { return joined_; }
  const View& view() const { return view_; }
  // Counts the changes of view() (a full view or a delta applied): an entry of member() stays
  // valid, and the same, while this does not change.
  std::uint64_t view_changes() const { return view_changes_; }
  const JoinReply& membership() const { return reply_; }
  // A member of the current view (peer-to-peer connections accept only these).
  bool is_member(const secure::PublicKey& key) const { return member(key) != nullptr; }
  // Its entry in the current view, or null.
  const Member* member(const secure::PublicKey& key) const;
  // Gossip mode: the members round `round` groups (gossip_roster.hpp), whether `key` takes part
  // in it, and forgetting what no round from `round` on needs any more (the driver is past them).
  std::vector<PeerKey> gossip_roster(std::uint64_t round) const {
    return roster_.members_of_round(view_, round);
  }
  bool present_in_round(const PeerKey& key, std::uint64_t round) const {
    return proto::present_in_round(view_, key, round);
  }
  void forget_removals_before(std::uint64_t round) { roster_.forget_before(round); }
  // The run's next round as of the last heartbeat ack (HeartbeatAck::next_round); 0 before one.
  std::uint64_t next_round() const { return next_round_; }

 private:
  void handle(TimePoint now, MessageType type, std::span<const std::byte> body);
  template <typename M>
  void send(const M& message);
  // The failures of the row: "4 tries in a row" (`attempts` names them), or with several
  // addresses the passes over them and the time they took.
  std::string in_a_row(TimePoint now, std::string_view attempts) const;
  // Queues an event of `kind` and returns it for its payload to be filled in.
  ClientEvent& emit(ClientEvent::Kind kind, std::string text = {});

  TrackerClientConfig config_;
  bool connected_ = false;
  bool joined_ = false;
  bool was_member_ = false;  // joined once: connection failures are retried from then on
  bool gave_up_ = false;     // a refused event is out: no second one
  // The pass under way (attempts made in it, its worst failure so far) and the row of whole
  // passes of one verdict before it, since the last connection.
  std::size_t pass_attempts_ = 0;
  ConnectFailure pass_worst_ = ConnectFailure::unreachable;
  ConnectFailure last_failure_{};
  int failures_in_a_row_ = 0;
  TimePoint pass_began_{};
  TimePoint row_began_{};
  JoinReply reply_;
  View view_;
  MembersDigest view_digest_;
  std::uint64_t view_changes_ = 0;
  bool view_requested_ = false;
  GossipRoster roster_;
  std::uint64_t next_round_ = 0;
  Heartbeat stats_;
  TimePoint next_heartbeat_ = kNever;
  TimePoint tracker_deadline_ = kNever;  // silent past this: tracker_lost
  std::deque<ClientEvent> events_;
  std::deque<Outgoing> transmits_;
};

}  // namespace loco::proto
