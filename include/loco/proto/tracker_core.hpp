#pragma once
// The tracker of one run as a sans-I/O state machine: admission, membership with heartbeats and
// eviction, signed membership views, rounds (quorum, group, commit, abort and retry), and the
// registry of shared-state hashes that tells out-of-sync peers where to fetch the state. No
// socket, no clock, no randomness: the driver (tracker/ over net/, or sim/) passes `now` in and
// moves the messages. docs/TRACKER.md describes the rules it applies.
//
// Peers are named by their authenticated identity key: the driver keeps one connection per key
// (a new connection from a key replaces the old one without a disconnect event), says which
// network each connection comes from (on_connected(), before its first message) and reports
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
// that cannot apply a delta sends view_request and gets the full view of the last broadcast, once
// per broadcast: a request is a few bytes and the full view ~600 bytes a member, so answering
// every one would let a member make the tracker send without bound.
//
// Round lifecycle (round r = committed_round + 1):
//   peers say ready(r) → formation_time() → group(r, attempt a) to its members → each member
//   reports round_done(r, a, state hash) → commit(r, a, hash) → state_changed.
//   A state commits only when more than half of the group as formed (its first attempt, before
//   any member was dropped) reports it: once every member reported, or report_grace after a
//   state reached that majority. No state with a majority: the round is given up.
//   A member that leaves, is evicted, reports a failure or misses round_timeout aborts attempt a;
//   the survivors get abort(retry) and a new group (r, a + 1), or abort(no retry) when fewer than
//   min_peers or than a majority of the group as formed are left, or after max_attempts beyond
//   two a member. A report naming another member stops the attempt; for accusation_grace the
//   tracker collects the others' reports: a member named by a majority of the group sits the
//   retry out (a poisoned update reaches everyone), one that leaves is gone (a crash); otherwise
//   a member's first report of a round is taken on trust and a later one takes it out of the
//   retry with the one it names, and benches it where others could have confirmed it. k < n/2
//   lying members cost a round at most 2k extra attempts and k honest members.
//   Members ready while fewer than min_peers are get abort(no retry) after join_timeout
//   (release_time()): they keep training and say ready again.
//   Liveness (docs/SECURITY.md): a member benched or refused for the round, or no longer waited
//   for, counts neither as live nor as one of the previous group; a quorum that waits a phase in
//   vain counts a missed round for the members not ready; a bench counts round attempts; too few
//   unbenched members let every bench end; a round given up keeps the members ready outside its
//   attempt.
//
// Reachability (tracker_reachability.cpp): a join asks the driver to dial the peer's registered
// address back (poll_probe(), drained with the events); the driver reports what it found
// (on_probe_result) and the core's probe_timeout decides when no answer means unreachable. The
// view lists the measurement, never the peer's claim. Two members that are not reachable link
// through a relay the group message names (relay_plan.hpp): a group holds as many of them as its
// relays' budgets link.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/custody_policy.hpp"
#include "loco/proto/custody_pull.hpp"
#include "loco/proto/judge_messages.hpp"
#include "loco/proto/relay_plan.hpp"
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

// Dial `address` and check that the peer there is `peer` (the secure channel's handshake and
// the stream bundle's welcome), within the config's probe_timeout.
struct Probe {
  PeerKey peer;
  std::string address;
};

struct TrackerEvent {
  enum class Kind {
    joined,
    refused,     // a join refused (the reply says why)
    left,        // a member left, disconnected or was evicted
    misbehaved,  // a peer broke the protocol or sent a refused update
    reported,    // a member reported another (a claim; `peer` is the reporter)
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
  // `network` names where the connection comes from (an IPv4 address, an IPv6 /64): at most
  // max_members_per_network members share one. Empty: not counted (tests, the simulator).
  void on_connected(const PeerKey& peer, std::string network);
  void on_disconnect(TimePoint now, const PeerKey& peer);
  void on_timer(TimePoint now);

  // Reachability probes to make (tracker_reachability.cpp), and what one found: `reached` when the
  // peer at `address` completed the handshake as `peer`. A result for a probe the core no longer
  // waits for (timed out, the member left or joined again elsewhere) is ignored.
  std::optional<Probe> poll_probe();
  void on_probe_result(TimePoint now, const PeerKey& peer, const std::string& address,
                       bool reached);

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
  // Member records the quorum rule's passes have walked (quorum_input()): at most one pass over the
  // members per input, and only while members are ready. A work count, not a time, for tests to
  // bound (tests/sim/scale_work_test.cpp, docs/SCALE.md).
  std::uint64_t quorum_members_walked() const { return quorum_members_walked_; }

  const TrackerCoreConfig& config() const { return config_; }
  bool has_member(const PeerKey& peer) const { return members_.contains(peer); }

  // Checkpoint custody (tracker_custody.cpp). The driver stores each pulled copy (poll_custody(),
  // drained with the events) and hands the newest copy it holds to set_custody(): the core serves
  // it to a peer that must fetch the state when no live member holds it, and counts the custody
  // schedule from its round. `state` stays unchanged while the core holds it.
  std::optional<CustodyCopy> poll_custody();
  void set_custody(StateManifest manifest, std::shared_ptr<const std::vector<std::byte>> state);
  std::optional<CustodyEntry> custody() const { return custody_; }
  // The bytes of that copy (null: none).
  std::shared_ptr<const std::vector<std::byte>> custody_state() const { return custody_state_; }

 private:
  struct MemberRecord {
    Member member;
    TimePoint joined{};
    TimePoint last_seen{};
    std::uint64_t state_round = 0;
    Digest state_hash{};
    bool resyncing = false;  // told to fetch the state, not yet back in sync
    // Its shard is its own (shard_taken_). After the run's end, with every shard taken (by peers
    // that stay to serve the model), a newcomer, which trains nothing, is admitted on shard 0
    // without taking it, so that members staying cannot keep the model from anyone.
    bool owns_shard = true;
    std::string network;  // of its connection when it joined
    // Rounds formed without it while the quorum waited for it (not ready, or fetching), and waits
    // of the quorum in vain (count_wait_in_vain), since it last took part in a committed round: at
    // wait_rounds it is no longer waited for, nor counted as live.
    std::uint32_t rounds_missed = 0;
    // It ended a fetch behind the run (rounds committed while it downloaded): the next round to
    // form waits for its fetch of the newest state as for a member catching up, whatever
    // rounds_missed says; at most once per key in kCatchUpRounds rounds (grant_catch_up).
    bool catch_up_wait = false;
    Heartbeat stats;
    float step_seconds = 0;  // its last ready's measured step time (Ready::step_seconds), 0: none
    std::uint64_t donor_load = 0;       // resyncs it was named a donor for
    std::uint32_t relay_pairs = 0;      // the relay budget it declared (JoinRequest)
    std::uint64_t full_view_epoch = 0;  // the broadcast whose full view it was last sent on request
  };
  struct Attempt {
    std::uint32_t number = 0;
    std::vector<PeerKey> members;  // ring order
    TimePoint deadline{};
    std::map<PeerKey, Digest> done;
    std::vector<RelayRoute> relays;  // as in the group message
    TimePoint majority_at = kNever;  // when a state first held a majority of the formed group
  };
  // An attempt aborted on a report naming a suspect: the retry waits accusation_grace for the
  // suspect to leave or a majority to name it, collecting the members' reports meanwhile.
  struct PendingRetry {
    std::uint32_t attempt = 0;
    std::vector<PeerKey> members;  // the aborted attempt's, ring order
    // suspect -> its accusers, each with whether that was its first report of the round
    std::map<PeerKey, std::map<PeerKey, bool>> accusations;
    std::set<PeerKey> proven;  // shown at fault by signed statements (owner_check.hpp)
    TimePoint deadline{};
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
  std::optional<std::string> join_refusal(TimePoint now, const PeerKey& from,
                                          const JoinRequest& request);
  void handle_heartbeat(TimePoint now, const PeerKey& from, const Heartbeat& heartbeat);
  void remove_member(TimePoint now, const PeerKey& peer, TrackerEvent::Kind kind,
                     const std::string& why, bool disconnect);
  void bar(TimePoint now, const PeerKey& peer);
  void evict_silent(TimePoint now);
  // TrackerCoreConfig::stall_grace: called first by every input that may evict.
  void forgive_own_stall(TimePoint now);
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
  // Checked owners' proofs (tracker_proofs.cpp).
  void handle_proven_misconduct(TimePoint now, const PeerKey& from, const ProvenMisconduct& m);
  std::string convicted_text(const std::set<PeerKey>& convicted) const;
  // Reorders a group so that no two members ever disputed with each other are neighbours, where it
  // can.
  void keep_disputed_apart(std::vector<PeerKey>& ring) const;
  void forget_disputes_of_gone_members();
  // Disputes decided by evidence (tracker_judging.cpp, segment_judge.hpp).
  // Names a judge for the dispute `proof` (two result statements) of the group `members` and calls
  // it, or nothing when none is left to name (or too many are pending); `by_counting` is whom the
  // counting rule convicts if the judge does not decide.
  std::optional<PeerKey> call_judge(TimePoint now, const MisconductProof& proof,
                                    const std::vector<PeerKey>& members,
                                    std::set<PeerKey> by_counting);
  // Whether `peer` is a party to a dispute of round `round` still being judged.
  bool awaits_verdict(std::uint64_t round, const PeerKey& peer) const;
  void handle_verdict(TimePoint now, const PeerKey& from, const Verdict& verdict);
  void judging_timer(TimePoint now);
  TimePoint judging_deadline() const;
  // Orders a checked direct exchange's group so that no member can choose its neighbours (its
  // checker and whom it checks): by the hash of each key with the tracker's signature over the
  // run, round and attempt, deterministic and unpredictable to the members.
  void order_unsteerably(std::vector<PeerKey>& group) const;
  void try_form(TimePoint now);
  // When the quorum rule lets the next group form, ignoring `now`: formation_time(in), later by a
  // join_timeout when the ready members are a pair that could not judge each other (unjudged_) and
  // another member is live: a third member's word decides there.
  TimePoint formation_deadline(const QuorumInput& in) const;
  // Two members whose accusation or dispute nobody else could judge (a group of two): the next
  // group forms with a third member where one comes in time.
  void note_unjudged(const PeerKey& a, const PeerKey& b);
  // Rounds paced by the tracker: the next phase from the live members' step times (nothing when
  // pacing is off or nothing is known yet), and the straggler wait that follows from it.
  std::optional<Duration> round_phase() const;
  std::uint32_t phase_ms() const;  // round_phase() as Group::phase_ms (0: none)
  Duration straggler_wait() const;
  // The quorum rule's input as of now (`now` left at its minimum).
  QuorumInput quorum_input() const;
  // Whether the quorum waits for member `key` (not ready), and counts it as live: one that has
  // missed fewer than wait_rounds rounds (at least one for a member of the last committed group),
  // or one catching up after a fetch that ended behind the run (MemberRecord::catch_up_wait).
  bool waited_for(const PeerKey& key, const MemberRecord& m) const;
  bool waited_for(const MemberRecord& m, bool in_last_group) const;  // without the lookup
  // Waited for, not ready, not sitting out, and holding the run's state or fetching it: a group
  // formed now, or a wait in vain, counts a round it missed.
  bool missing(const PeerKey& key, const MemberRecord& m) const;
  // Silent members (heartbeating, never ready) as many as the ready ones would hold the quorum
  // for good, with no round formed to count them missed, and benches counted in round attempts
  // would never run out. A wait of vain_wait(known_phase()) with at least min_peers ready and no
  // majority of the live members (count_wait_in_vain) counts as a round attempt, and, once the
  // run's phase is known, as a missed round for each member missing. The wait is join_timeout, or
  // that phase when longer: the tracker's pace, or the shortest of its recent rounds from commit to
  // commit. An honest member is ready within a phase; one member ready at once must not get members
  // on long phases counted out and form a group alone, so before the phase is known (this process's
  // first commit, unless paced) nobody is counted out.
  std::optional<Duration> known_phase() const;
  Duration vain_wait(std::optional<Duration> phase) const;
  // Members ready, at least min_peers, and no group may form: the quorum waits, maybe in vain.
  bool quorum_stuck(const QuorumInput& in) const;
  TimePoint vain_wait_end(const QuorumInput& in) const;  // kNever: no wait in vain under way
  void count_wait_in_vain(TimePoint now);
  // Lets the ready members go when too few are ready (release_time).
  void release_if_too_few(TimePoint now);
  // A new group for next_round() (formed: true) or the retry of an aborted attempt (false).
  void start_attempt(TimePoint now, std::vector<PeerKey> group, bool formed);
  // More than half of the group as formed.
  std::size_t majority() const { return formed_size_ / 2 + 1; }
  // Commits, gives up or waits, from the reports in and the time (see the header's lifecycle).
  void decide(TimePoint now);
  void commit(TimePoint now, const Digest& hash);
  // Ends the running attempt: every member told; a retry with the members not in `excluded` and
  // still here if enough are left (and `retry`), else the round is given up.
  void abort_attempt(TimePoint now, const std::string& reason, const std::set<PeerKey>& excluded,
                     bool retry = true);
  // Retries with `members` (ring order) less `excluded` and those gone; tells the rest they are
  // out of the round (and those in the retry that it was aborted, unless they were `told`).
  // Gives the round up when too few are left.
  void retry_or_give_up(TimePoint now, const std::string& reason,
                        const std::vector<PeerKey>& members, const std::set<PeerKey>& excluded,
                        bool told);
  // Ends next_round()'s formation without a commit: `attempt`'s members' ready entries go, the
  // others stay (end_round()).
  void give_up_round(TimePoint now, const std::vector<PeerKey>& attempt);
  // Resets what lasts a round (reports, disputes, refusals, attempts) and starts a new quorum
  // wait from the ready entries left.
  void end_round(TimePoint now);
  void release_held_back(const std::string& reason);
  void add_accusation(TimePoint now, const PeerKey& from, const RoundFailed& failed);
  void settle_accusation(TimePoint now);
  bool in_attempt(const PeerKey& peer) const;
  // Benches count in the rounds the run attempts (round_attempts_), not in those it commits: a run
  // whose rounds all fail still runs its benches out.
  std::uint64_t next_round_attempt() const { return round_attempts_ + 1; }
  bool benched(const PeerKey& peer) const;
  void bench(const PeerKey& accuser);
  // The round attempts left on `peer`'s bench, counting the next one (0: not benched).
  std::uint64_t bench_left(const PeerKey& peer) const;
  // Whether `peer` is told to sit next_round() out (benched, or its update refused): it counts
  // neither as live nor as one of the previous group when the next group forms.
  bool sits_out(const PeerKey& peer) const { return benched(peer) || refused_.contains(peer); }
  // When fewer members than a round needs (min_peers) are not benched, every bench ends: a bench
  // keeps a liar from costing retries, and must never keep the run from forming a round.
  void let_benched_back_if_too_few();
  // `key` may say ready again this round: told so if it asked since it was told it sits out.
  void let_back(const PeerKey& key, const std::string& reason);

  // Shared state (tracker_sync.cpp).
  bool in_sync(const MemberRecord& m) const;
  bool someone_in_sync() const;
  // The newest round an honest member can hold: no member is ahead of the run, as a commit is
  // saved before it is sent and a gossip peer waits for the run's round (HeartbeatAck) before it
  // starts the next (gossip_round_window covers how stale that figure may be).
  std::uint64_t newest_plausible_round(TimePoint now);
  // Whether this run committed (round, hash): the genesis, or a round of the history.
  bool committed_here(std::uint64_t round, const Digest& hash) const;
  // Whether a joining peer's tentative state (JoinRequest::tentative_round) is the run's committed
  // state, computed on the round before (the state it holds): a commit saved and never announced
  // to it.
  bool computed_committed(const JoinRequest& request) const;
  // Sends `peer` (just joined, computed_committed) the commit it missed, and counts it as holding
  // the run's state (tracker_sync.cpp says why).
  void commit_tentative(const PeerKey& peer);
  void handle_state_report(TimePoint now, const PeerKey& from, const StateReport& report);
  // Whether `peer`, whose fetch ended behind the run, gets a catch-up wait (MemberRecord::
  // catch_up_wait) now: not when its key had one in the last kCatchUpRounds rounds, whether it
  // joined again or left meanwhile. Per join, a liar that joined again and reported an old state
  // before every round held each one join_timeout (docs/SECURITY.md, Liveness).
  bool grant_catch_up(const PeerKey& peer);
  void resync_out_of_sync(TimePoint now);
  // `again`: the member reports, while told to fetch, a state that is not the run's: its fetch
  // from the donors it was named failed, and the tracker's custody copy of the state (if it holds
  // one) is named beside the members, so that members who lie about the bytes cannot keep it from
  // the state (docs/TRACKER.md, "Checkpoint custody").
  void send_resync(TimePoint now, const PeerKey& peer, bool again = false);
  void send_resync(TimePoint now, const PeerKey& peer, std::uint64_t round, const Digest& hash,
                   bool again = false);
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

  // The end of the run (tracker_run_end.cpp; TrackerCoreConfig::final_round).
  bool run_over() const {
    return config_.final_round != 0 && committed_round_ >= config_.final_round;
  }
  // The run is over and the tracker will hold no copy of its final state: custody is off, or the
  // state is too large. Its members need not wait for one.
  bool final_state_unkept() const;
  // Tells `peer` the run ended (RunEnded) if it holds the final state and the tracker keeps it, or
  // will not: a member at the final round waits for this before it leaves.
  void tell_run_ended(const PeerKey& peer);
  void tell_members_run_ended();
  // After the final round's commit: says so, and tells the members when no copy will be kept.
  void final_round_committed();
  // reconcile() at the end of the run: the final state is never given up for an older one.
  void wait_for_the_final_state(TimePoint now);
  // Why a peer may not join now: the run is over and nobody can hand it the final state (no live
  // member holds it, the tracker has no copy) and the peer does not hold it itself.
  std::optional<std::string> end_refusal(const JoinRequest& request) const;

  // A tracker restart (tracker_restart.cpp): the members of the saved view are waited for, up to
  // restart_grace, before a round forms.
  void await_last_view(TimePoint now, const TrackerSnapshot& restored);
  void rejoined_after_restart(const PeerKey& peer);
  void restart_grace_timer(TimePoint now);
  // No group forms before this (TimePoint::min(): no restart wait).
  TimePoint restart_hold() const { return awaited_.empty() ? TimePoint::min() : awaited_until_; }

  // Reachability (tracker_reachability.cpp).
  // At join: probe the member's address again (a new process may listen elsewhere, or be
  // reachable now); until the probe ends it is listed as its key's last probe of the same address
  // found, else not measured. Never listed unreachable without a probe of that address.
  void measure_reachability(TimePoint now, const PeerKey& peer);
  // Starts the queued probes that fit max_probes; one whose key or address has had
  // probes_per_interval probes in the last probe_interval waits (probe_waiting_) until it may.
  void start_probes(TimePoint now);
  // When `peer` may next be probed at `address`: now, or when the oldest of the last
  // probes_per_interval probes of the key, or of the address, is probe_interval old.
  TimePoint probe_allowed_at(TimePoint now, const PeerKey& peer, const std::string& address);
  void count_probe(TimePoint now, const PeerKey& peer, const std::string& address);
  void probe_timer(TimePoint now);
  TimePoint probe_deadline() const;
  // A probe's outcome (a result, or the timeout): remembered for probe_interval, counted, set.
  void probe_found(TimePoint now, const PeerKey& peer, Reachability reach, const std::string& why);
  void set_reachability(TimePoint now, const PeerKey& peer, Reachability reach,
                        const std::string& why);
  // Relays (tracker_relays.cpp).
  // The group less the members measured unreachable that its relays cannot link
  // (relay_plan.hpp, max_unreachable; rotating by round): those are left out of the round (told,
  // not waited for).
  std::vector<PeerKey> linkable_group(std::vector<PeerKey> group);
  std::vector<PeerKey> unlinked_members(const std::vector<PeerKey>& group) const;  // those left out
  std::vector<RelaySeat> relay_seats(const std::vector<PeerKey>& group) const;
  // `from` blames `relay` for its relayed link (its first such report this round): the relay
  // relays nothing for accusation_bench_rounds more rounds (bar_relay) and the attempt is retried
  // with the same members at once. A
  // second report in a round is taken as `from`'s own failure: it sits the retry out. So a relay
  // that drops costs one attempt, and an end that lies bars at most one relay, per round.
  void relay_failed(TimePoint now, const PeerKey& from, const PeerKey& relay,
                    const std::string& report);
  // At the attempt's deadline: true when it blamed relays and retried (tracker_rounds.cpp).
  bool relays_timed_out(TimePoint now, const std::set<PeerKey>& stragglers);
  void bar_relay(const PeerKey& relay);
  bool relay_barred(const PeerKey& relay) const;

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
  // next_round() at each key's last catch-up wait (grant_catch_up), kept across its leaving; at
  // most kMaxBarred entries, those older than kCatchUpRounds first.
  static constexpr std::uint64_t kCatchUpRounds = 10;
  std::map<PeerKey, std::uint64_t> catch_up_granted_;
  std::map<PeerKey, std::string> networks_;  // of the connected peers (on_connected)
  // What each connected peer may still send (config_.message_burst, refilled at message_rate).
  struct MessageBudget {
    double left = 0;
    TimePoint refilled{};
  };
  std::map<PeerKey, MessageBudget> budgets_;
  bool spend_message(TimePoint now, const PeerKey& peer);
  // Keys cut off for misbehaving, refused until then. At most kMaxBarred: the oldest go first.
  std::map<PeerKey, TimePoint> barred_;
  static constexpr std::size_t kMaxBarred = TrackerSnapshot::kMaxHeldAgainst;
  // A restarted tracker takes back the keys its snapshot held against. They are saved with the
  // next commit, not at each change: a file write per bar would let anyone with keys to burn make
  // the tracker rewrite its state file as fast as it can bar them.
  void restore_held_against(TimePoint now, const TrackerSnapshot& restored);
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
  // When the next broadcast may go out: view_interval after the last, or longer with many members
  // (TrackerCoreConfig::view_send_rate).
  TimePoint next_view_at() const;
  std::uint64_t gossip_frontier_ = 0;  // the newest round any member has reported (gossip mode)
  std::uint64_t gossip_next_round_ = 0;
  std::optional<TimePoint> gossip_next_round_at_;

  std::uint64_t committed_round_ = 0;
  Digest committed_hash_{};
  std::vector<RoundRecord> history_;
  std::vector<LostRounds> lost_rounds_;  // the newest TrackerSnapshot::kMaxLostRounds, saved
  // The latest `now` of any input: snapshot() saves how long each bar has left from it.
  TimePoint latest_now_{};
  TimePoint reconcile_after_{};  // a restarted tracker waits this long for its peers to return
  // Members of the restored view not joined again yet, waited for until awaited_until_; the count
  // of them at the restart, for the log.
  std::set<PeerKey> awaited_;
  TimePoint awaited_until_{};
  std::size_t awaited_at_restart_ = 0;
  bool no_known_state_noted_ = false;       // said once that no live peer holds a committed state
  bool final_state_missing_noted_ = false;  // said once that no one holds the final state

  std::map<PeerKey, ReadyEntry> ready_;  // for next_round()
  std::set<PeerKey> refused_;            // updates refused for next_round(): not waited for
  // Refused (or benched) members that said ready again in next_round(): told to train on when the
  // round ends, so that a peer is answered once a round however often it asks.
  std::set<PeerKey> held_back_;
  TimePoint first_ready_ = kNever;
  // The quorum's wait for the members not ready runs from here (or first_ready_, if later): the
  // last commit, give-up or wait in vain.
  TimePoint quorum_wait_from_{};
  // This process's last commit (its start, before one), and the last kRecentPeriods rounds' times
  // from commit to commit (known_phase()).
  TimePoint last_commit_at_{};
  static constexpr std::size_t kRecentPeriods = 4;
  std::deque<Duration> recent_periods_;
  std::vector<PeerKey> previous_group_;  // sorted, as members_ and ready_: quorum_input() merges
  // quorum_input() as try_form() last computed it, for release_if_too_few() and poll_timeout()
  // after the same input (1,000 members: three passes over them per tracker input were a fifth of
  // the simulator's time, docs/SCALE.md). Dropped by try_form() and by every public method that
  // changes the core's state, before it changes anything.
  std::optional<QuorumInput> quorum_memo_;
  mutable std::uint64_t quorum_members_walked_ = 0;
  std::optional<Attempt> attempt_;
  std::optional<PendingRetry> pending_retry_;
  std::set<PeerKey> reported_;  // members that reported a failure in next_round()
  // Checked owners: each member's partners in disputed (owner, checker) pairs, for the whole run
  // (tracker_proofs.cpp). At most kMaxBarred entries: members that left go first.
  std::map<PeerKey, std::set<PeerKey>> disputes_;
  // Disputes a judge was called for, until its verdict or its grace's end.
  struct Judging {
    JudgeCall call;
    std::vector<PeerKey> members;   // the disputed attempt's group
    std::set<PeerKey> by_counting;  // whom the counting rule convicts if the judge does not decide
    TimePoint deadline{};
  };
  static constexpr std::size_t kMaxJudgings = 64;
  std::vector<Judging> judgings_;
  // Benches the members `j` leaves to the counting rule; says why.
  void judge_by_counting(const Judging& j, const std::string& why);
  // The (attempt, segment) of each dispute counted in next_round(): every member of a group holds
  // the same proof, so one dispute may arrive many times and must count once.
  std::set<std::pair<std::uint32_t, std::uint32_t>> disputed_segments_;
  // Relays blamed for a relayed link: they relay nothing up to this round attempt
  // (next_round_attempt() at the blame, and accusation_bench_rounds after it). At most kMaxBarred
  // entries.
  std::map<PeerKey, std::uint64_t> relays_barred_;
  // Whom a group's members link with, from the run's settings (strategy.all-reduce = ring: ring
  // neighbours; anything else: every pair).
  RelayLinks relay_links_ = RelayLinks::every_pair;
  bool relay_deadline_used_ = false;  // next_round() already retried a deadline on its relays
  // Accusers no one confirmed (settle_accusation), and members disputed with a second partner
  // (tracker_proofs.cpp): they sit out every round attempt up to `until` (next_round_attempt()), a
  // bench twice as long each time. Kept after a member leaves, so that joining again does not end
  // it; at most kMaxBarred entries.
  struct Bench {
    std::uint64_t until = 0;
    std::uint32_t times = 0;
  };
  std::map<PeerKey, Bench> benched_;
  // Pairs that were one word against the other (note_unjudged), smaller key first. At most
  // kMaxBarred entries: those of members that left go first.
  std::set<std::pair<PeerKey, PeerKey>> unjudged_;
  // Rounds the run attempted: each group formed for a new round (not its retries) and each time
  // the ready members were let go for want of enough of them (release_if_too_few).
  std::uint64_t round_attempts_ = 0;
  std::size_t formed_size_ = 0;  // the group of next_round()'s last formation
  float median_norm_ = 0;        // of the updates of the round being formed or run
  float norm_floor_ = 0;         // the least reference the next round may use
  // Since the last give-up: bounded by max_attempts beyond two a member of the group formed.
  std::uint32_t attempts_this_round_ = 0;
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

  std::deque<PeerKey> probe_queue_;       // joined, waiting for a probe slot
  std::map<PeerKey, TimePoint> probing_;  // probes under way, by their deadline
  // Members whose key or address used its probes of the interval, by when the next may start.
  std::map<PeerKey, TimePoint> probe_waiting_;
  // The starts of the last probes_per_interval probes of a key, or of an address, oldest first.
  using ProbeStarts = std::deque<TimePoint>;
  // Each key's last probe, kept across its leaving: a peer whose tracker link drops and comes
  // back at the same address is listed as measured while it is probed again. At most kMaxBarred
  // entries, as address_probes_.
  struct ProbeRecord {
    ProbeStarts starts;
    std::string address;
    Reachability found = Reachability::unmeasured;  // until the probe ends
  };
  std::map<PeerKey, ProbeRecord> probed_;
  std::map<std::string, ProbeStarts> address_probes_;
  std::deque<Probe> probes_out_;

  std::deque<TrackerEvent> events_;
  std::deque<Transmit> transmits_;
  TrackerStatus counters_;  // the counting fields of status()
};

}  // namespace loco::proto
