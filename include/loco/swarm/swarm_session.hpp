#pragma once
// A peer's network side, on its io_context thread: the connection to the tracker (TrackerLink
// driving proto::TrackerClient), the connections to the other members (PeerMesh), and the
// protocol cores a round needs: the all-reduce of the group (proto/all_reduce.hpp) or, for DeMo,
// its all-gather (proto/all_gather.hpp), the state fetcher when this peer is out of sync and the
// state server for others (proto/state_transfer.hpp), which also answer the tracker's custody over
// the tracker link (proto/state_relay.hpp). It tells the compute thread what happened through a
// Mailbox and takes its commands (ready, round done, serve) as posted calls.
//
// Peers talk only to members of the tracker's current signed view: the mesh admits no one else.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/net/peer_mesh.hpp"
#include "loco/net/tracker_link.hpp"
#include "loco/proto/all_gather.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/early_messages.hpp"
#include "loco/proto/state_transfer.hpp"
#include "loco/proto/tracker_client.hpp"
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

// Byte counts for the progress line, read from the compute thread.
struct TrafficCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
};

class SwarmSession {
 public:
  SwarmSession(boost::asio::io_context& io, SwarmConfig config, const secure::KeyPair& identity,
               Mailbox& mailbox, TrafficCounters& traffic);

  // All of these on the io thread (the group posts them).
  // `genesis`: the hash of the round-0 state the run's settings give.
  void start(const Digest& genesis, std::uint64_t state_round, const Digest& state_hash);
  // `tentative` (may be empty): the state a mean leads to, computed here as soon as the
  // all-reduce is done, its hash reported at once (an asynchronous round, swarm_async_group.hpp),
  // and served from the moment the round commits (the compute thread installs it only when the
  // round lands, up to H steps later: until then its own copy is the round before). Without it
  // the compute thread computes and reports the hash (round_done).
  using Tentative = std::function<const train::SharedState&(std::span<const float> mean)>;
  void ready(const proto::Ready& ready, std::vector<float> delta, Tentative tentative = {});
  // Ready for a round whose group all-gathers one message per member (DeMo's components): the
  // mean event carries every member's part. Not screened by norm (the tracker is told 0).
  void ready_gather(proto::Ready ready, std::vector<std::byte> part);
  // Gossip mode: averages `packed` (θ ‖ v ‖ Δ) in this peer's gossip group for `round`, with no
  // tracker round; the mean event carries the group's mean and its size, or this peer's own
  // `packed` and 1 when it ends up alone.
  void ready_gossip(std::uint64_t round, std::vector<float> packed);
  void round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash);
  void serve(proto::StateManifest manifest, std::shared_ptr<const std::vector<std::byte>> state);
  void state_report(std::uint64_t round, const Digest& hash);
  void stats(const proto::Heartbeat& heartbeat);
  void leave(const std::string& reason);
  // Set at construction: any thread may ask.
  bool gossip() const { return config_.gossip_group != 0; }

 private:
  void on_client_event(const proto::ClientEvent& event);
  void on_mesh_message(const proto::PeerKey& from, proto::MessageType type,
                       std::span<const std::byte> body);
  void on_mesh_lost(const proto::PeerKey& peer, const std::string& why);
  void on_tracker_state(proto::MessageType type, std::span<const std::byte> body);
  // A state-transfer message to a peer over the mesh, or to the tracker over its link (custody).
  void send_state(const proto::PeerKey& to, const std::string& address, proto::MessageType type,
                  std::vector<std::byte> body);
  void announce_ready(const proto::Ready& ready);
  // The round's collective: an all-reduce, or an all-gather after ready_gather.
  void start_collective(const proto::Group& group);
  void deliver(const proto::PeerKey& from, proto::MessageType type,
               std::span<const std::byte> body);
  void pump_collective();
  bool collective_running() const;
  void end_collective();
  void post_result();
  void post_alone();
  void arm_gossip_wait(std::uint64_t round);
  bool gossip_group_whole() const;
  void serve_tentative();
  void start_fetch(const proto::Resync& resync);
  void pump_fetch();
  void pump_server();
  std::string address_of(const proto::PeerKey& peer) const;
  void count_traffic();
  void reach(FaultPoint point, std::uint64_t round) const;

  boost::asio::io_context& io_;
  SwarmConfig config_;
  const secure::KeyPair& identity_;
  Mailbox& mailbox_;
  TrafficCounters& traffic_;
  std::unique_ptr<compress::Codec> codec_;
  std::unique_ptr<proto::TrackerClient> client_;  // from start(): the join needs the mesh's port
  std::shared_ptr<net::TrackerLink> link_;
  std::shared_ptr<net::PeerMesh> mesh_;

  // The round this peer is ready for: its update (or its all-gather part), kept whole for
  // retries, and the all-reduce's buffer.
  std::uint64_t ready_round_ = 0;  // 0: not ready for any round
  proto::Ready ready_{};
  bool gather_ = false;  // the round's collective is an all-gather of part_
  std::vector<float> delta_;
  std::vector<std::byte> part_;
  Tentative tentative_;
  // The asynchronous round's tentative state, computed and reported, not committed yet.
  const train::SharedState* tentative_state_ = nullptr;
  proto::StateManifest tentative_manifest_;
  std::vector<float> work_;
  std::unique_ptr<proto::AllReduce> all_reduce_;
  std::unique_ptr<proto::AllGather> all_gather_;
  std::uint32_t attempt_ = 0;
  std::size_t group_size_ = 0;
  bool mean_posted_ = false;
  bool failure_reported_ = false;
  proto::EarlyMessages early_;

  boost::asio::steady_timer gossip_timer_;
  std::vector<proto::PeerKey> gossip_group_;  // gossip mode: this round's group in its roster

  std::unique_ptr<proto::StateFetcher> fetcher_;
  proto::Resync fetching_{};
  boost::asio::steady_timer fetch_timer_;
  Duration fetch_backoff_;             // before asking the tracker again after a failed fetch
  std::set<proto::PeerKey> reported_;  // the donors of this fetch reported to the tracker
  proto::StateServer server_;
  std::shared_ptr<const std::vector<std::byte>> served_;
  std::uint64_t served_round_ = 0;
  Digest served_hash_{};
  bool fetch_pending_ = false;  // the compute thread was told to wait for a fetched state
};

}  // namespace loco::swarm
