#pragma once
// A peer's whole protocol life, sans-I/O (docs/ARCHITECTURE.md, "The peer"): what it does with the
// tracker's events, its round's collective, the state it fetches and the state it serves. One
// core, two drivers: swarm::SwarmSession (Asio: the tracker link, the mesh, a timer and the
// compute thread's mailbox) and sim::PeerNode (virtual time, simulated links). Neither holds a
// protocol rule of its own; each turns the core's outputs into I/O and its application events
// into training.
//
// A round, as the core runs it:
//   ready(Δ)                 ── the tracker forms a group
//   group                    ──> collective_started; the all-reduce (or DeMo's all-gather) of
//                                the group, seeded round·1000 + attempt; messages of a collective
//                                not started here yet wait (early_messages.hpp)
//   done                     ──> mean (the group's average, or every member's part)
//   round_done(hash)         ── the application computed the state the mean leads to
//   commit                   ──> committed (`mine`: the hash reported here won)
//   abort                    ──> aborted; on retry the survivors' group runs again from the
//                                same update (the direct exchange: the same encoded bytes)
//   resync                   ──> must_fetch, then fetched (the majority's state from donors);
//                                kept when the run went back to the state served here; one to
//                                a newer round while a fetch runs lets that fetch end first
//   run ended                ──> run_ended: the final round is committed (and in the tracker's
//                                custody, or not kept there): a peer at it may leave
// In gossip mode (config.gossip_group ≥ 2, docs/DESIGN.md §1.6) there is no tracker round: the
// core averages θ ‖ v ‖ Δ in the group proto::gossip_group_of gives it and hands back the mean,
// or this peer's own vector when it ends up alone (peer_core_gossip.cpp).
//
// Memory and copies per round, for an update of n floats (c bytes a value encoded: int8 with
// blocks of 256, c = 1.02):
//   direct exchange (the default)  the core reads Δ once, to encode it whole at the round's first
//       attempt (EncodedUpdate: c·n bytes, kept until the round ends, the only copy of this
//       member's contribution; a retry sends the same bytes), and lets Δ go: a buffer handed over
//       goes back to its owner's pool, and a borrowed Δ (ready(Ready, span): DiLoCo's, in the inner
//       loop's gradient arena) is the application's again once the mean is in. The mean leaves as
//       its owners' encoded chunks (round_mean.hpp, c·n). So a round holds 2c·n bytes and no fp32
//       vector of its own; a retry after the mean keeps a second encoded mean (c·n) until the
//       application lets the first go.
//   ring, and gossip groups  the collective reads Δ (θ ‖ v ‖ Δ) as it goes and writes the mean into
//       a working buffer of n floats from a pool (the ring sums fp32 partial sums, and a member
//       alone in gossip mode applies its own vector unquantized): Δ stays whole for retries, two
//       fp32 vectors a round (8n; a borrowed Δ is copied into a buffer of the core's at ready(),
//       which costs that 4n and a pass over Δ: these are not the memory-critical path). The
//       working buffer leaves as the mean (an fp32 RoundMean) and goes back to the pool when its
//       last reader lets it go.
// Either way a round allocates nothing the size of the model after the first, and the encode of
// the direct exchange runs over OpenMP's team (encoded_update.hpp).
//
// Call order: after any input, drain poll_event() and poll_transmit(), flush the tracker
// client's transmits, and arm a timer for poll_timeout() that calls on_timer(now). The tracker
// client is the core's; the driver's transport drives its connection (on_connected, on_message,
// on_timer: net::TrackerLink or the simulator) and hands every event it polls to
// on_client_event().

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/buffer_pool.hpp"
#include "loco/proto/all_gather.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/backoff.hpp"
#include "loco/proto/early_messages.hpp"
#include "loco/proto/encoded_update.hpp"
#include "loco/proto/gossip_groups.hpp"
#include "loco/proto/link_direction.hpp"
#include "loco/proto/relay_core.hpp"
#include "loco/proto/relay_messages.hpp"
#include "loco/proto/round_mean.hpp"
#include "loco/proto/segment_judge.hpp"
#include "loco/proto/state_transfer.hpp"
#include "loco/proto/tracker_client.hpp"

namespace loco::proto {

struct PeerCoreConfig {
  PeerKey self;
  // Signs this peer's statements when the tracker asks for checked owners (owner_check.hpp);
  // self's key pair, outliving the core.
  const secure::KeyPair* signer = nullptr;
  std::string codec = "int8:block=256";
  std::size_t chunk_values = std::size_t{1} << 16;
  AllReduceAlgorithm all_reduce = AllReduceAlgorithm::direct;
  // Gossip mode: groups of this size (2..8); 0: the tracker's rounds.
  std::size_t gossip_group = 0;
  // A gossip group not done this long after the run reached its round leaves this peer alone.
  Duration gossip_wait = std::chrono::minutes(10);
  // Gossip mode: the group of `self` in `roster` for round r (proto::gossip_group_of; the
  // simulator shares one grouping between its peers).
  std::function<std::vector<PeerKey>(const GossipRound& r, std::span<const PeerKey> roster,
                                     const PeerKey& self)>
      gossip_group_of;
  // What this peer relays for pairs of unreachable members when the tracker names it
  // (relay_core.hpp); max_pairs is what it declares at join (JoinRequest::relay_pairs).
  RelayBudget relay{};
};

struct PeerEvent {
  enum class Kind {
    joined,              // `reply`: the shard, the timers, the run's committed round
    refused,             // this peer cannot join: `text`, `cause` (ClientEvent::cause)
    collective_started,  // this peer's `members` begin attempt `attempt` of `round` (`trim`)
    mean,                // the collective is done: `mean` (the all-reduce's average, of `members`)
                         // or `parts` (the all-gather's, in member order); in gossip mode alone:
                         // `mean` is this peer's own vector and `members` only itself
    committed,           // the tracker committed `round` with `hash`; `mine`: the one reported here
    aborted,             // attempt `attempt` of `round` failed: `text`; `retry`: another follows
    must_fetch,          // the run's state is elsewhere: fetching round `round`, hash `hash`
    fetched,             // `state`: the bytes of round `round`, hash `hash`, from `members` (the
                         // donors whose chunks it holds; the tracker's key for its custody copy);
                         // no state when the run went back to the state this peer serves while
                         // it waited for a fetch
    kept,                // the run went back to the state this peer serves (round, hash)
    run_ended,           // the run's final round `round` is committed with `hash`; `kept`: the
                         // tracker holds a copy of it (else it keeps none: custody is off)
    note,                // something the peer's log should say: `text` (`warning`: a fault)
  };
  Kind kind{};
  std::string text{};
  bool warning = false;
  ErrorCategory cause = ErrorCategory::config;  // with refused
  JoinReply reply{};
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  Digest hash{};
  bool retry = false;
  bool mine = false;
  bool kept = false;
  std::vector<PeerKey> members{};
  std::size_t trim = 0;
  bool waited_out = false;  // gossip mode, alone: the group was not done in the gossip wait
  // With `mean` of a round weighted by tokens: the group's tokens in member order
  // (Group::tokens; empty: the plain mean) and this member's share of them, tokens / Σ tokens.
  std::vector<std::uint64_t> tokens{};
  double share = 0;
  // With `mean` of a round paced by the tracker, or `fetched`: how long the next inner phase lasts
  // (Group::phase_ms, Resync::phase_ms); 0: the member keeps its own.
  Duration phase{};
  // With `fetched`: when the resync that started this fetch arrived. The tracker resyncs a member
  // left out of a round when that round commits, as the others begin their next phase: a member
  // that counts its phase from then, not from the fetch's end, is ready with them.
  TimePoint told{};
  std::shared_ptr<const RoundMean> mean{};
  std::shared_ptr<const std::vector<std::vector<std::byte>>> parts{};
  std::shared_ptr<const std::vector<std::byte>> state{};
};

class PeerCore {
 public:
  PeerCore(PeerCoreConfig config, TrackerClientConfig client);

  // --- inputs from the network ---
  TrackerClient& client() { return client_; }
  const TrackerClient& client() const { return client_; }
  void on_client_event(TimePoint now, const ClientEvent& event);
  // A message from a member (the driver admits members of the current view only). Throws
  // Error(protocol) for what a peer must not send: the driver drops that peer.
  void on_peer_message(TimePoint now, const PeerKey& from, MessageType type,
                       std::span<const std::byte> body);
  void on_peer_lost(TimePoint now, const PeerKey& peer, const std::string& why);
  // A relay_data message from member `from` (peer_core_relay.cpp). A reachable peer is asked to
  // relay: it forwards the bytes (or refuses: relay_refused back; or holds them until it hears of
  // their group), through poll_transmit(). An unreachable one is an end: the bytes come back for
  // the driver to open (the end-to-end channel's, or the simulator's plain payload) and hand on
  // with on_peer_message() as header.peer's, if that is a member. Throws Error(format) for a
  // malformed body.
  std::optional<RelayData> on_relay_data(const PeerKey& from, std::span<const std::byte> body);
  void on_timer(TimePoint now);

  // --- inputs from the application ---
  // Ready for `ready.round` with update `delta`, handed over: the application neither reads nor
  // writes it from now on. The direct exchange encodes it and lets it go (so a pool,
  // core/buffer_pool.hpp, gets it back); the ring keeps it whole for retries until the round ends.
  using Update = std::shared_ptr<std::vector<float>>;
  void ready(const Ready& ready, Update delta);
  // The same with `delta` borrowed: read until this round's mean event or its end (committed,
  // aborted for good, a resync), and left alone afterwards. The direct exchange encodes it at the
  // round's first attempt; the ring copies it at once into a buffer of its own (the class comment).
  void ready(const Ready& ready, std::span<const float> delta);
  // Ready for a round whose group all-gathers one message per member (DeMo's components); not
  // screened by norm (the tracker is told 0).
  void ready_gather(Ready ready, std::vector<std::byte> part);
  // Gossip mode: averages `packed` (θ ‖ v ‖ Δ) in this peer's group for `round`.
  void ready_gossip(TimePoint now, std::uint64_t round, Update packed);
  // The hash of the state the round's mean leads to: the tracker commits the majority's.
  void round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash);
  // This member claims attempt `attempt` of `round` failed because of `suspect` (what a member
  // whose collective fails says; the simulator's lying accuser says it of honest members).
  void accuse(std::uint64_t round, std::uint32_t attempt, const std::string& reason,
              const PeerKey& suspect);
  // The state this peer now holds, for others to fetch (and the tracker's custody): `bytes` are
  // read when a request comes, so they stay valid and unchanged until the next serve() or
  // unserve(); `keep` (may be null) owns them meanwhile.
  void serve(StateManifest manifest, StateBytes bytes, std::shared_ptr<const void> keep = {});
  // The bytes served are about to change: requests are refused until the next serve().
  void unserve();
  // Tells the tracker this peer holds (round, hash): after a fetch, or a gossip round.
  void state_report(std::uint64_t round, const Digest& hash);
  void leave(const std::string& reason);

  // --- outputs ---
  struct Send {
    PeerKey to;
    std::string address;  // where the view (or the resync's donor list) says it listens
    // Which link it goes on (link_direction.hpp): this peer's own, the one `to` opened once it is
    // there (`to` is unreachable, this peer is not), or, for an answer to `to`'s request, the one
    // the request came on.
    SendOn on = SendOn::own;
    MessageType type{};
    std::vector<std::byte> body;
    // Set: `to` is the relay of this peer's link with `relayed->peer`, both unreachable: the
    // driver sends `type` and `body` inside relay_data with this header (relay_messages.hpp).
    std::optional<RelayHeader> relayed{};
  };
  std::optional<PeerEvent> poll_event();
  std::optional<Send> poll_transmit();
  TimePoint poll_timeout() const;

  // --- what a driver or a test may look at ---
  bool gossip() const { return config_.gossip_group != 0; }
  bool collective_running() const;
  std::uint64_t collective_bytes_sent() const;
  const std::vector<PeerKey>& group() const { return group_; }
  // The member whose relay carries this peer's link with `peer` this attempt, if one does.
  std::optional<PeerKey> relay_of(const PeerKey& peer) const;
  const RelayCore& relay() const { return relay_; }
  std::uint64_t served_round() const { return served_round_; }
  // The round this peer is ready for (0: none).
  std::uint64_t ready_round() const { return ready_round_; }
  // The hash round_done reported for ready_round() (zero: none yet): the state this member holds
  // once the round commits with it.
  const Digest& reported() const { return reported_; }
  // This peer's update for the round under way as the group sums it: for the direct exchange,
  // once its collective started, the values its encoded update decodes to; otherwise Δ as handed
  // over. A copy (the simulator's ledger checks the mean against it). None: no update (not
  // ready, or an all-gather's part).
  std::optional<std::vector<float>> contribution() const;
  // The (round, attempt) of a collective's message (an all-reduce chunk or an all-gather part),
  // and whether it belongs to the all-gather phase (the ring's second half, or DeMo's exchange).
  struct CollectiveId {
    std::uint64_t round = 0;
    std::uint32_t attempt = 0;
    bool gather_phase = false;
  };
  static CollectiveId collective_id(MessageType type, std::span<const std::byte> body);

 private:
  void on_resync(TimePoint now, const Resync& resync);
  void announce_ready(const Ready& ready);
  void start_collective(const Group& group);
  void deliver(const PeerKey& from, MessageType type, std::span<const std::byte> body);
  void fail_collective(const std::string& reason, std::optional<PeerKey> suspect);
  void pump_collective();
  // Evidence (unit_evidence.hpp): a chunk this member refused, shown to the rest of its group;
  // another member's, checked here once per member and attempt, names the accused too if it holds.
  void share_evidence(const Evidence& evidence);
  void on_evidence(const PeerKey& from, std::span<const std::byte> body);
  void end_collective();
  // The round is over here (committed, given up, replaced): its buffers go back to their pools.
  void end_round();
  // Whether the round's collective is the direct exchange of an encoded update (the class
  // comment), whose result is kept encoded.
  bool encodes_once() const;
  std::span<const float> update_values() const;  // Δ, handed over or borrowed
  void emit_mean();
  void start_fetch(TimePoint now, const Resync& resync);
  void pump_fetch(TimePoint now);
  void pump_server();
  // `answer`: to a request `to` sent (SendOn::asker).
  void send(const PeerKey& to, MessageType type, std::vector<std::byte> body, bool answer = false);
  std::string address_of(const PeerKey& peer) const;
  // send()'s lookups in the view, kept while it does not change (TrackerClient::view_changes()):
  // a ring sends thousands of chunks a round, all to its successor.
  struct HopLookup {
    std::uint64_t view_changes = 0;
    PeerKey hop{};
    const Member* member = nullptr;  // hop's entry, null if the view does not list it
    Reachability self = Reachability::unmeasured;
  };
  const HopLookup& look_up_hop(const PeerKey& hop);
  // As the current view lists it (unmeasured for a key it does not list).
  Reachability reachability_of(const PeerKey& peer) const;
  // Opens the links this peer must dial to the other members of its group (link_direction.hpp).
  void open_links(const std::vector<PeerKey>& members);
  // Says once what the tracker found about this peer's reachability, and what it means.
  void note_own_reachability();
  PeerEvent& emit(PeerEvent::Kind kind);
  void note(std::string text, bool warning);

  // Relays (peer_core_relay.cpp): the group's routes that concern this peer, as an end or as
  // the relay.
  void set_relays(const Group& group);
  void relay(const PeerKey& from, const RelayHeader& header, std::span<const std::byte> payload);
  void on_relay_refused(TimePoint now, const PeerKey& from, std::span<const std::byte> body);

  // Disputes decided by evidence (peer_core_judge.cpp, segment_judge.hpp): a member of a disputed
  // attempt sends the judge its contribution to the segment (and, as its owner or checker, the
  // statements it summed); the judge recomputes it and sends the tracker its verdict.
  void on_judge_call(TimePoint now, const JudgeCall& call);
  void on_judge_message(const PeerKey& from, MessageType type, std::span<const std::byte> body);
  void contribute_to_judge(const JudgeCall& call, const AllReduceConfig& attempt);
  // The statements this member summed for segment `segment` of attempt `attempt`, if it did.
  std::optional<std::vector<Statement>> inputs_for(std::uint32_t attempt, std::size_t segment);
  void keep_inputs();  // before the running direct exchange goes: its lists, for a judge
  void pump_judges();
  void judge_timer(TimePoint now);

  // Gossip mode (peer_core_gossip.cpp).
  bool gossip_group_whole() const;
  void gossip_view_changed();
  void gossip_wait_over(TimePoint now);
  void alone(const std::string& why);

  PeerCoreConfig config_;
  PeerKey tracker_key_;
  std::string run_id_;
  TrackerClient client_;
  std::shared_ptr<const compress::Codec> codec_;  // shared with the encoded means it emits

  // The round this peer is ready for: its update (or all-gather part). The class comment says
  // which of update_, encoded_ and result_ a round holds when.
  std::uint64_t ready_round_ = 0;  // 0: not ready for any round
  Ready ready_{};
  bool gather_ = false;
  // Δ as handed over (or copied, ring), or borrowed, until encoded (direct) or the round ends.
  Update update_;
  std::span<const float> borrowed_;
  std::optional<EncodedUpdate> encoded_;  // direct: Δ encoded at the round's first attempt
  std::vector<std::byte> part_;
  // The running collective, its group and, for the ring and gossip, the buffer the mean goes into
  // (from work_pool_; the direct exchange keeps its mean encoded); copies of a borrowed Δ.
  BufferPool<float> work_pool_, update_pool_;
  BufferPool<float> parts_pool_{16};  // the direct exchange's chunk contributions (all_reduce.hpp)
  std::shared_ptr<std::vector<float>> result_;
  std::unique_ptr<AllReduce> all_reduce_;
  std::unique_ptr<AllGather> all_gather_;
  std::vector<PeerKey> group_;
  std::uint32_t attempt_ = 0;
  std::size_t trim_ = 0;
  std::vector<std::uint64_t> tokens_;  // the attempt's (PeerEvent::tokens)
  double share_ = 0;                   // this member's share of them (PeerEvent::share)
  Duration phase_{};                   // the attempt's (PeerEvent::phase)
  bool mean_emitted_ = false;
  bool failure_reported_ = false;
  // The direct exchange's attempt, kept after it stops (an abort comes before the others'
  // evidence): what evidence is checked against, whose members showed some, and whom this member
  // named in it.
  std::optional<AllReduceConfig> attempt_config_;
  std::set<PeerKey> evidence_from_, named_;
  // The round's checked direct-exchange attempts this member took part in (for a judge call on
  // one), and the contribution statements it summed as an owner or checker, by (attempt, segment).
  std::map<std::uint32_t, AllReduceConfig> attempt_configs_;
  std::map<std::pair<std::uint32_t, std::size_t>, std::vector<Statement>> kept_inputs_;
  // Disputes this member judges, by (round, attempt, segment), each with its grace's end; and
  // judge messages that came before the call (at most kMaxEarlyJudgeMessages).
  struct Judging {
    std::unique_ptr<SegmentJudge> judge;
    TimePoint deadline = kNever;
  };
  std::map<std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>, Judging> judging_;
  EarlyMessages judge_early_{256};
  // The hash round_done reported for ready_round_'s running attempt (zero: none): the state this
  // member holds once the round commits with it, kept until the tracker says commit or abort and
  // across a lost tracker link, told at each join (TrackerClient::set_tentative). Set through
  // set_reported(), which tells the client.
  Digest reported_{};
  void set_reported(const Digest& hash);
  EarlyMessages early_;
  TimePoint gossip_deadline_ = kNever;
  bool waited_out_ = false;

  std::unique_ptr<StateFetcher> fetcher_;
  Resync fetching_{};
  TimePoint fetch_told_{};      // when `fetching_` arrived (PeerEvent::told)
  bool fetch_pending_ = false;  // the application was told must_fetch and waits for fetched
  std::set<PeerKey> reported_donors_;
  Backoff fetch_backoff_;
  TimePoint ask_again_ = kNever;  // after a failed fetch: ask the tracker for new donors then
  StateServer server_;
  bool serving_ = false;
  std::shared_ptr<const void> served_;  // owns the bytes served, when someone must
  std::uint64_t served_round_ = 0;
  Digest served_hash_{};

  Reachability reach_noted_ = Reachability::unmeasured;
  // send()'s lookups in the view (TrackerClient::view_changes()).
  std::optional<HopLookup> hop_lookup_;
  std::map<PeerKey, PeerKey> relay_of_;  // the attempt's relayed links: other end -> relay
  RelayCore relay_;

  std::deque<PeerEvent> events_;
  std::deque<Send> transmits_;
};

}  // namespace loco::proto
