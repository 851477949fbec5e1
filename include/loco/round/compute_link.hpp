#pragma once
// The network side's half of a peer's hand-off between its two threads (swarm_group.hpp): the
// commands the compute thread gives the peer's protocol core (ready, round done, serve...) and
// the core's events turned into the Mailbox events the compute thread waits for. Both drivers of
// proto::PeerCore use it: loco-peer's Asio session (swarm_session.hpp) and the simulator's
// process (sim/peer_node.hpp), whose compute thread runs in virtual time
// (sim/strategy_process.hpp), or whose modelled peer takes the events on the event loop
// (sim/modelled_process.hpp). So the rounds of every strategy run through the same code in both. It
// neither reads a clock nor performs I/O: its driver calls drive() on the core after each call.
//
// The one thing it computes is an asynchronous round's tentative state: the manifest of the state
// the mean leads to, computed on the network side as soon as the collective is done (DiLoCo's,
// once its compute thread has previewed the mean) and its hash reported at once, while the
// compute thread trains on (Streaming DiLoCo's fragments, DiLoCo's overlapped rounds, DeMo's
// delayed apply, whose state is that of the gathered parts). Streaming's tentative state is held
// whole: it is served from the moment the round commits (the compute thread installs it only when
// the round lands, up to H steps later: until then its own copy is the round before), and so is
// DeMo's (landed a step later). DiLoCo's is not: the compute thread serves it once installed, with
// the manifest computed here.

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "loco/core/buffer_pool.hpp"
#include "loco/proto/peer_core.hpp"
#include "loco/round/swarm_events.hpp"

namespace loco::round {

// The compute thread's shared state, which the network side serves in place rather than from a
// copy: the compute thread changes it only holding `mutex` exclusively, and counts each change in
// `version`; the network side reads it for a request only holding `mutex` shared, and only if
// nothing changed since it was told to serve it.
struct SharedStateGuard {
  std::shared_mutex mutex;
  std::uint64_t version = 0;  // under `mutex`
};

// An asynchronous round's landing on the network side (ComputeLink's class comment).
struct TentativeState {
  // The manifest of the state `mean` leads to (only reads the shared state).
  std::function<proto::StateManifest(const proto::RoundMean& mean)> manifest;
  // An all-gather's (DeMo's delayed apply): the manifest of the state the parts lead to.
  std::function<proto::StateManifest(std::span<const std::vector<std::byte>> parts)> gathered;
  // That state's bytes, to serve from the commit on; empty: the compute thread serves it.
  std::function<proto::StateBytes()> bytes;
  // The round's first mean is hashed only once the compute thread says previewed() (DiLoCo's
  // overlapped round: train/overlapped_group.hpp says why).
  bool after_preview = false;
  explicit operator bool() const { return manifest || gathered; }
};

class ComputeLink {
 public:
  using Tentative = TentativeState;

  // `core`, `mailbox` and `guard` outlive the link. `poison`: for the test suite only, this peer
  // misbehaves ("scale": sends its update 1000x larger than the norm it declares; "segment": its
  // first value 1000x that norm, which only one owner receives; "nan": declares a NaN norm;
  // "tokens": claims 2^30 times the tokens its update was trained on).
  ComputeLink(proto::PeerCore& core, Mailbox& mailbox, SharedStateGuard& guard,
              std::string poison = {});

  // --- the compute thread's commands (run on the network side, in the order given) ---
  // Δ as the compute thread gives it (PeerCore::ready): a buffer handed over, which it neither
  // reads nor writes afterwards, or borrowed values, which the core reads until the round's mean
  // or end.
  using Delta = std::variant<proto::PeerCore::Update, std::span<const float>>;
  // With `tentative` the round is asynchronous (the class comment); without it the compute thread
  // computes the state and reports its hash (round_done).
  void ready(const proto::Ready& ready, Delta delta, Tentative tentative = {});
  // Ready for a round whose group all-gathers one message per member (DeMo's components): the
  // mean event carries every member's part. Not screened by norm (the tracker is told 0). With
  // `tentative` (its `gathered`) the round is asynchronous, as ready()'s.
  void ready_gather(proto::Ready ready, std::vector<std::byte> part, Tentative tentative = {});
  // Gossip mode: averages `packed` (θ ‖ v ‖ Δ) in this peer's gossip group for `round`, with no
  // tracker round; the mean event carries the group's mean and its size, or this peer's own
  // `packed` and 1 when it ends up alone.
  void ready_gossip(TimePoint now, std::uint64_t round, proto::PeerCore::Update packed);
  void round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash);
  // The compute thread has previewed `round`'s mean (Tentative::after_preview): its tentative
  // state is hashed now.
  void previewed(std::uint64_t round);
  // Serves the compute thread's shared state in place: `bytes` as they are at `version` of the
  // guard, whose manifest is `manifest`.
  void serve(proto::StateManifest manifest, proto::StateBytes bytes, std::uint64_t version);
  // Serves a copy of a state, `bytes`, whose manifest is `manifest`: the core keeps it while it
  // serves it.
  void serve_copy(proto::StateManifest manifest,
                  std::shared_ptr<const std::vector<std::byte>> bytes);
  void state_report(std::uint64_t round, const Digest& hash);
  void stats(const proto::Heartbeat& heartbeat);
  // Nothing the compute thread owns is read from here on: it may free its state once this
  // returns.
  void leave(const std::string& reason);

  // --- the network side's ---
  // One event of the core for the compute thread (notes are the driver's to log or drop).
  void on_core_event(proto::PeerEvent& event);
  // Before the core takes an input: the guard held shared if the input reads the served state in
  // place (a peer's state request, which the core answers from it; the tracker's custody pull,
  // state_relay), else none. So both drivers take it for the same inputs. Serving state the
  // compute thread has changed since stops first.
  std::shared_lock<std::shared_mutex> guard_for(proto::MessageType type);
  std::shared_lock<std::shared_mutex> guard_for(const proto::ClientEvent& event);

 private:
  std::shared_lock<std::shared_mutex> guard_served();

  proto::PeerCore& core_;
  Mailbox& mailbox_;
  SharedStateGuard& guard_;
  std::string poison_;
  std::optional<std::uint64_t> served_version_;  // of the shared state served; none: a copy

  // The tentative of the round now begun (none: a gossip round, or leaving); what was deferred
  // of the last is dropped.
  void expect(Tentative tentative, std::uint64_t round);
  // A mean whose tentative state is to be hashed: an attempt's, or the parts of a gather.
  struct TentativeInput {
    std::uint64_t round = 0;
    std::uint32_t attempt = 0;
    std::shared_ptr<const proto::RoundMean> mean;
    std::shared_ptr<const std::vector<std::vector<std::byte>>> parts;
  };
  // Computes the tentative state's manifest and reports its hash to the core and the compute
  // thread.
  void report_tentative(const TentativeInput& input);

  Tentative tentative_;
  std::optional<std::uint64_t> awaiting_preview_;  // the round whose previewed() is to come
  std::optional<TentativeInput> deferred_;         // its mean, in before previewed()
  bool computed_ = false;                          // tentative_ ran for the attempt under way
  proto::StateManifest tentative_manifest_;
  BufferPool<std::byte> served_pool_;  // the copies of the tentative state it serves
};

}  // namespace loco::round
