#pragma once
// A peer's network side, on its io_context thread: the Asio driver of proto::PeerCore, the
// peer's whole protocol (peer_core.hpp; the simulator's sim::PeerNode drives the same core). It
// connects the core to the tracker (net::TrackerLink driving the core's client), to the other
// members (net::PeerMesh) and to a timer, tells the compute thread what happened through a
// Mailbox, and takes its commands (ready, round done, serve) as posted calls. The one thing it
// computes is an asynchronous round's tentative state (below), on this thread.
//
// Peers talk only to members of the tracker's current signed view: the mesh admits no one else.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "loco/net/peer_mesh.hpp"
#include "loco/net/tracker_link.hpp"
#include "loco/proto/peer_core.hpp"
#include "loco/swarm/swarm_events.hpp"
#include "loco/train/shared_state.hpp"

namespace loco::swarm {

// Where a test may make a peer die (peer/debug_faults.hpp): on the first all-reduce chunk of either
// phase it receives (all_gather also on the first all-gather part), and on the first request for
// the state it serves.
enum class FaultPoint { reduce_scatter, all_gather, serve };

struct SwarmConfig {
  std::string run_id;
  secure::PublicKey tracker_key;
  std::string tracker_address;       // host:port
  std::string listen = "0.0.0.0:0";  // the mesh's listening address
  std::string advertise;             // where others reach it ("": 127.0.0.1:<listen port>)
  std::uint64_t upload_bps = 0;      // declared to the tracker
  std::string credential;
  std::vector<proto::Setting> settings;
  std::string codec = "int8:block=256";
  std::size_t chunk_values = std::size_t{1} << 16;
  proto::AllReduceAlgorithm all_reduce = proto::AllReduceAlgorithm::direct;
  // Gossip mode (g in 2..8; 0: the tracker's rounds): ready_gossip averages in the group
  // proto::gossip_groups gives this peer from the round's roster (gossip_roster.hpp); a group not
  // done in gossip_wait once most peers are at its round (partners only slower are waited for:
  // the tracker removes crashed ones), or that loses a member, leaves this peer alone for it.
  std::size_t gossip_group = 0;
  Duration gossip_wait = std::chrono::minutes(10);
  net::BundleConfig bundle;
  Duration idle_timeout = std::chrono::minutes(5);  // of the links between peers (keepalives)
  std::shared_ptr<net::LinkShaper> link;            // this peer's emulated WAN link, may be null
  net::ListenerLimits listener_limits = net::ListenerLimits::peer_defaults();  // the mesh's
  // For the test suite only: this peer misbehaves. "scale": sends its update 1000x larger than
  // the norm it declares; "nan": declares a NaN norm (a broken update).
  std::string poison;
  // For the test suite only: called with the round at each fault point; may end the process.
  std::function<void(FaultPoint, std::uint64_t round)> fault_point;
};

// The compute thread's shared state, which the network thread serves in place rather than from a
// copy: the compute thread changes it only holding `mutex` exclusively, and counts each change in
// `version`; the network thread reads it for a request only holding `mutex` shared, and only if
// nothing changed since it was told to serve it.
struct SharedStateGuard {
  std::shared_mutex mutex;
  std::uint64_t version = 0;  // under `mutex`
};

// Byte counts for the progress line, read from the compute thread.
struct TrafficCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
};

class SwarmSession {
 public:
  SwarmSession(boost::asio::io_context& io, SwarmConfig config, const secure::KeyPair& identity,
               Mailbox& mailbox, TrafficCounters& traffic, SharedStateGuard& guard);

  // All of these on the io thread (the group posts them).
  // `genesis`: the hash of the round-0 state the run's settings give.
  void start(const Digest& genesis, std::uint64_t state_round, const Digest& state_hash);
  // `tentative` (may be empty): the state a mean leads to, computed here as soon as the
  // all-reduce is done, its hash reported at once (an asynchronous round, swarm_async_group.hpp),
  // and served from the moment the round commits (the compute thread installs it only when the
  // round lands, up to H steps later: until then its own copy is the round before). Without it
  // the compute thread computes and reports the hash (round_done).
  using Tentative = std::function<const train::SharedState&(std::span<const float> mean)>;
  // `delta` is read until the round ends, and not written meanwhile.
  void ready(const proto::Ready& ready, proto::PeerCore::Values delta, Tentative tentative = {});
  // Ready for a round whose group all-gathers one message per member (DeMo's components): the
  // mean event carries every member's part. Not screened by norm (the tracker is told 0).
  void ready_gather(proto::Ready ready, std::vector<std::byte> part);
  // Gossip mode: averages `packed` (θ ‖ v ‖ Δ) in this peer's gossip group for `round`, with no
  // tracker round; the mean event carries the group's mean and its size, or this peer's own
  // `packed` and 1 when it ends up alone.
  void ready_gossip(std::uint64_t round, proto::PeerCore::Values packed);
  void round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash);
  // Serves the compute thread's shared state in place: `bytes` as they are at `version` of the
  // guard, whose manifest is `manifest`.
  void serve(proto::StateManifest manifest, proto::StateBytes bytes, std::uint64_t version);
  void state_report(std::uint64_t round, const Digest& hash);
  void stats(const proto::Heartbeat& heartbeat);
  void leave(const std::string& reason);
  // Set at construction: any thread may ask.
  bool gossip() const { return config_.gossip_group != 0; }

 private:
  // After any input to the core: its events to the mailbox (or the log), its messages to the
  // mesh, the tracker client's to the link, and its timer armed.
  void drive();
  void on_core_event(proto::PeerEvent& event);
  void on_mesh_message(const proto::PeerKey& from, proto::MessageType type,
                       std::span<const std::byte> body);
  void arm_timer();
  // Before the core answers a request for the state: holds the guard shared for the answer, and
  // stops serving state the compute thread has changed since.
  std::shared_lock<std::shared_mutex> guard_served();
  void reach(FaultPoint point, std::uint64_t round) const;

  boost::asio::io_context& io_;
  SwarmConfig config_;
  const secure::KeyPair& identity_;
  Mailbox& mailbox_;
  TrafficCounters& traffic_;
  SharedStateGuard& guard_;
  std::optional<std::uint64_t> served_version_;  // of the shared state served; none: a copy
  std::unique_ptr<proto::PeerCore> core_;        // from start(): the join needs the mesh's port
  std::shared_ptr<net::TrackerLink> link_;
  std::shared_ptr<net::PeerMesh> mesh_;
  boost::asio::steady_timer timer_;  // the core's deadline
  TimePoint timer_at_ = kNever;

  // An asynchronous round's tentative state: computed here from the mean, its hash reported, and
  // served from here once the round commits with it.
  Tentative tentative_;
  const train::SharedState* tentative_state_ = nullptr;
  proto::StateManifest tentative_manifest_;
  BufferPool<std::byte> served_pool_;  // the copies of the tentative state it serves
};

}  // namespace loco::swarm
