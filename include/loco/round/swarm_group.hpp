#pragma once
// The swarm as the training loop sees it: a train::OuterGroup whose rounds go over the network,
// and a train::GatherGroup (DeMo) whose rounds all-gather one message per member instead.
// It drives the peer's network side (network_side.hpp: loco-peer's io_context thread running
// SwarmSession, or the simulator's process in virtual time) and turns each round
// (train/strategy.hpp) into the protocol, on the compute thread:
//
//   ready(round, ‖Δ‖, hash of the state Δ was built on)  ── the tracker forms a group
//   mean of the group ──> tentative(mean): the state it leads to, and its hash
//     (DeMo: every member's part ──> tentative(parts); the rest of the round is the same)
//   round done(hash)  ── every member's hash in: the tracker commits the majority
//   commit(hash)      ──> install() if it is ours; serve the new state to newcomers
//   abort(retry)      ──> the survivors' new group runs the all-reduce again from this member's Δ
//   abort(no retry)   ──> skipped: keep training, try again at the next round
//   resync            ──> fetch the majority's state from donors into the SharedState: replaced
// Which of these an event is, for the round under way, is round_step (round_step.hpp): the rule
// the simulator's modelled peer follows too (sim/modelled_process.hpp).
//
// In gossip mode (SwarmConfig::gossip_group) a round has no tracker side: the peer averages
// θ ‖ v ‖ Δ in its gossip group, puts the group's θ̄, v̄ into the shared state, computes
// tentative(Δ̄) and installs it at once, and reports the state's hash; alone (no partner, a group
// that failed or was not done in the gossip wait) it installs its own state and Δ.
//
// The shared state is changed only on the compute thread, holding the SharedStateGuard
// exclusively (install, a fetched state, a gossip mean); the network thread serves it in place,
// holding the guard shared, and stops serving it once it changed until it is told its new
// manifest (swarm_session.hpp). No copy of the state is made to serve it.
// The group keeps the hash of the shared state as it last installed, fetched or joined with it,
// and the tentative state's manifest, so that a round hashes the state once (its tentative: the
// manifest served once it is installed) and RoundResult::state carries it.
//
// What a DiLoCo round costs beyond its maths, for n parameters (docs/SCALE.md, measured by
// bench/run.sh peer-scale): one hash of θ ‖ v (8n bytes, ~0.6 GB/s a core), the outer step three
// times (the preview of θ' for the next phase, the hash's, install), each decoding the mean chunk
// by chunk, and with the direct exchange no fp32 vector at all: start() lends the core DiLoCo's Δ
// (in the inner loop's gradient arena), which the core encodes once (1.02n bytes with int8, kept
// for retries) before the mean comes, and the mean stays its owners' encoded chunks (1.02n,
// proto/round_mean.hpp) until installed. begin_round (DDP, Streaming, DiLoCo without overlap)
// copies the caller's Δ into a buffer of update_pool_ (4n), which the core lets go once encoded
// and which then takes the decoded mean (whole()), since those strategies read it whole; the
// ring keeps Δ and a mean buffer (8n, proto/peer_core.hpp). No allocation the size of the model
// after the first round.
// The round overlaps the next inner phase (train/overlapped_group.hpp: start, mean, land): the
// compute thread waits for the all-reduce only; the network thread hashes the state the mean
// leads to and reports it, and the compute thread installs it between two steps once committed.
// Thread crossings, six: Δ out, the mean in, `previewed` out, the tentative state's hash in
// (`reported`), the commit in, the installed state to serve out.
//
// A round in two halves, for an asynchronous group (swarm_async_group.hpp): begin_round hands Δ
// (and the tentative, which the network thread then computes and reports as soon as the mean is
// in) to the network thread and returns; end_round waits for the round's end and lands it.
// run_round is both at once (DDP's rounds, and DiLoCo's without a swarm). One round at a time:
// end_round before the next begin_round. DeMo's delayed apply is the same for an all-gather:
// start_gather hands the message over and returns, land_gather waits for the round's end.

#include <atomic>
#include <limits>
#include <memory>

#include "loco/core/buffer_pool.hpp"
#include "loco/round/network_side.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/overlapped_gather.hpp"
#include "loco/train/overlapped_group.hpp"
#include "loco/train/strategy.hpp"

namespace loco::round {

struct JoinOutcome {
  proto::JoinReply reply;
  bool fetched = false;  // the shared state was replaced by the run's (train::Start::joined)
  std::vector<secure::PublicKey> donors;  // with `fetched`: whose chunks it holds
  // With `fetched`, in a run paced by the tracker: the phase its resync carried (0: none) and
  // when that resync came, on the clock of the group's events (train::Strategy::joined_paced).
  Duration phase{};
  TimePoint told{};
  bool stopped = false;  // *stop turned true first: not joined, nothing changed
};

class SwarmGroup final : public train::OuterGroup,
                         public train::OverlappedGroup,
                         public train::GatherGroup,
                         public train::OverlappedGather {
 public:
  // The shared state is the strategy's (bind() before join()).
  // A round returns skipped soon after `*stop` turns true (a signal).
  // Over `side` (loco-peer's: SwarmThread, swarm_thread.hpp).
  explicit SwarmGroup(std::unique_ptr<NetworkSide> side, const std::atomic<bool>* stop = nullptr);
  void bind(train::SharedState& shared) { shared_ = &shared; }
  const train::SharedState& shared() const { return *shared_; }
  ~SwarmGroup() override;

  // Connects, joins with the shared state as it is (and the hash of the run's genesis, whose
  // manifest is `genesis`: the shared state's own when `at_genesis`, so it is not hashed twice),
  // and, when the run is elsewhere, fetches the run's state into it. Throws when it cannot join,
  // as soon as that is clear (proto::TrackerClient::on_connect_failed): Error(config) with the
  // tracker's reason when refused, or when the tracker ends the handshake (another run);
  // Error(crypto) when the tracker's key is not the pinned one; Error(network) when no connection
  // can be made, or nothing is heard for `patience`; Error(network) too when the run's state is
  // not fetched within `fetch_patience` (default: `patience`) of the tracker's answer. Returns with
  // `stopped` within a fraction of a second of `*stop` turning true.
  JoinOutcome join(const proto::StateManifest& genesis, bool at_genesis, Duration patience,
                   std::optional<Duration> fetch_patience = std::nullopt);

  train::RoundResult run_round(const train::RoundInput& input) override;
  train::RoundResult run_gather(const train::GatherInput& input) override;
  // With `tentative`, the network thread computes and reports the tentative state's hash as
  // soon as the mean is in (SwarmSession::ready): it must only read the shared state.
  void begin_round(std::uint64_t round, std::span<const float> delta, float norm,
                   const train::PhaseClaim& claim = {}, ComputeLink::Tentative tentative = {});
  // input.round as given to begin_round (input.delta is not read; input.tentative only when
  // begin_round had none).
  train::RoundResult end_round(const train::RoundInput& input);
  // A round begun and its mean not yet here (the fragment is on the wire).
  bool round_in_flight() const;

  // DiLoCo's overlapped round (train/overlapped_group.hpp): begin_round with a tentative that
  // only hashes (the network thread computes the manifest once told previewed(); the state is
  // served once installed).
  void start(std::uint64_t round, std::span<const float> delta, float norm,
             const train::PhaseClaim& claim,
             std::function<proto::StateManifest(const proto::RoundMean&)> manifest) override;
  std::shared_ptr<const proto::RoundMean> mean() override;
  void previewed() override;
  bool outcome_in() const override;
  train::RoundResult land(const std::function<void(const proto::RoundMean&)>& install) override;
  std::optional<train::RoundResult> take_replaced() override;
  // DeMo's delayed apply (train/overlapped_gather.hpp): the network thread computes the
  // tentative state from the parts, reports its hash and serves it from the commit on.
  void start_gather(train::GatherStart input) override;
  train::RoundResult land_gather(const std::function<void()>& install) override;
  // The hash of the shared state as this group last joined with it, installed it or fetched it
  // (kept, not computed: a peer's last line costs no hash of the state).
  const Digest& state_hash() const { return current_; }
  // The outcome of the latest round and how many rounds ran (committed, skipped or replaced).
  const train::RoundResult& last_round() const { return last_round_; }
  std::uint64_t rounds_run() const { return rounds_run_; }
  // The round begun and not landed (0: none).
  std::uint64_t round_begun() const { return begun_; }
  // The fp32 buffers this group allocated (Δ copied by begin_round, a mean read whole): none for
  // a run of DiLoCo's overlapped rounds over the direct exchange, one for blocking rounds.
  std::size_t update_buffers() const { return update_pool_.made(); }

  // Figures for the next heartbeat (the tracker's status page shows them).
  void publish(const proto::Heartbeat& heartbeat);
  // The mean training loss of the steps since the last round: the next ready tells the tracker,
  // whose status page shows it as that round's loss.
  void note_phase_loss(float loss) { phase_loss_ = loss; }
  // After the last round: the tracker's word that the run ended (its final round committed, and
  // whether it holds a copy), however early it came; nothing after `bound` or once *stop is set.
  std::optional<SwarmEvent> wait_run_ended(Duration bound);
  // After the run's end: this peer stays a member and its network thread serves the state it
  // holds to whoever the tracker sends to fetch it (loco-peer's --peer.seed-after-end), until
  // `bound` passes, *stop turns true or the tracker refuses it. A state fetched meanwhile is
  // loaded and served instead; other events are let go.
  void seed(Duration bound);
  // Tells the tracker and stops the network thread. Once it returns, the network thread reads
  // nothing the caller owns (the strategy's tentative state may be freed).
  void leave(const std::string& reason);
  const TrafficCounters& traffic() const { return side_->traffic(); }
  // The tracker's answer to this peer's latest join, as the compute thread took it from the
  // events (join(), then any wait on the rounds): a peer that joins again (its link dropped, it
  // was evicted, the tracker restarted) may be given another data shard (loco-peer then fetches
  // and trains on that one: docs/VOLUNTEER.md).
  const proto::JoinReply& last_join() const { return last_join_; }
  double network_wait_s() const { return wait_s_; }

 private:
  // The next event, or nothing once *stop_ is set.
  std::optional<SwarmEvent> wait_event();
  void load_fetched(const SwarmEvent& fetched);
  // Runs `change` on the shared state, holding the guard exclusively.
  void change_shared(const std::function<void()>& change);
  // begin_round with Δ in a buffer of update_pool_.
  void hand_over(std::uint64_t round, ComputeLink::Delta delta, float norm,
                 const train::PhaseClaim& claim, ComputeLink::Tentative tentative);
  // The round's mean as one span, for the strategies that read it whole (the class comment):
  // valid until the round lands.
  std::span<const float> whole(const proto::RoundMean& mean);
  // Serves the shared state as it is now, whose manifest is `manifest`.
  void serve_current(proto::StateManifest manifest);
  void report_state(std::uint64_t round, const Digest& hash);
  // The round's events until it lands: `tentative` takes the collective's result (the mean
  // event) and gives the manifest of the state it leads to, `install` makes that state current
  // once committed.
  using TentativeOf = std::function<proto::StateManifest(const SwarmEvent& result)>;
  train::RoundResult attempt_round(std::uint64_t round, const TentativeOf& tentative,
                                   const std::function<void()>& install);
  // One event of `round`: the round's outcome once it has one.
  std::optional<train::RoundResult> on_round_event(std::uint64_t round, const SwarmEvent& e,
                                                   const TentativeOf& tentative,
                                                   const std::function<void()>& install);
  train::RoundResult landed(train::RoundResult result);
  train::RoundResult outcome_on_stop(std::uint64_t round, const std::function<void()>& install);
  train::RoundResult gossip_round(const train::RoundInput& input);
  train::RoundResult skipped() const;

  train::SharedState* shared_ = nullptr;
  const std::atomic<bool>* stop_;
  std::unique_ptr<NetworkSide> side_;
  double wait_s_ = 0;  // seconds the compute thread spent waiting on rounds
  train::RoundResult last_round_;
  std::uint64_t rounds_run_ = 0;
  float phase_loss_ = std::numeric_limits<float>::quiet_NaN();
  Digest current_{};  // the shared state's hash (the class comment)
  proto::JoinReply last_join_;
  // The round's Δ (or gossip's θ ‖ v ‖ Δ), handed to the network thread in buffers it gives back
  // (core/buffer_pool.hpp), and the means read whole.
  BufferPool<float> update_pool_;
  std::uint64_t begun_ = 0;        // the round begun and not ended, 0: none
  bool reported_here_ = false;     // the network thread reports the tentative hash (begin_round)
  bool served_at_commit_ = false;  // ... and serves the tentative state from the commit on
  // The round under way, as its events come in.
  struct Progress {
    Digest mine{};                  // the hash this peer reported for the latest attempt
    proto::StateManifest manifest;  // of the state that attempt leads to
    std::shared_ptr<const proto::RoundMean> mean;  // that attempt's, read until install
    std::shared_ptr<std::vector<float>> decoded;   // whole(mean), when it is encoded
    std::size_t members = 0;
    double share = 0;
    Duration phase{};
    std::optional<train::RoundResult> ended;  // the outcome, once in
  };
  Progress progress_;
};

}  // namespace loco::round
