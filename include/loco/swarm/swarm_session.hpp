#pragma once
// A peer's network side, on its io_context thread (swarm_thread.hpp): the Asio driver of
// proto::PeerCore, the peer's whole protocol (peer_core.hpp; the simulator's sim::PeerNode drives
// the same core). It connects the core to the tracker (net::TrackerLink driving the core's
// client), to the other members (net::PeerMesh) and to a timer; the compute thread's commands
// and the events it waits for go through a ComputeLink (compute_link.hpp), as in the simulator.
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
#include "loco/net/relayed_links.hpp"
#include "loco/net/router_port.hpp"
#include "loco/net/tracker_link.hpp"
#include "loco/proto/peer_core.hpp"
#include "loco/round/network_side.hpp"
#include "loco/swarm/shard_service.hpp"

namespace loco::swarm {

// Where a test may make a peer die or stop (peer/debug_faults.hpp): on the first all-reduce chunk
// of either phase it receives (all_gather also on the first all-gather part), on the first request
// for the state it serves, and when a round's mean is in (before the compute thread has it and the
// peer reports the state it leads to).
enum class FaultPoint { reduce_scatter, all_gather, serve, relay, mean };

struct SwarmConfig {
  std::string run_id;
  secure::PublicKey tracker_key;
  std::string tracker_address;       // host:port, or replicas' host:port,host:port,...
  std::string listen = "0.0.0.0:0";  // the mesh's listening address
  // Where others reach it ("": the router's mapping if port_mapping got one, else the listen
  // address and port, 127.0.0.1 for any).
  std::string advertise;
  bool port_mapping = true;      // ask the home router to forward the port (net/router_port.hpp)
  proto::RelayBudget relay{};    // what it relays when reachable (proto/relay_core.hpp)
  std::uint64_t upload_bps = 0;  // declared to the tracker
  std::string credential;
  std::vector<proto::Setting> settings;
  std::string codec = "int8:block=256";
  std::size_t chunk_values = std::size_t{1} << 16;
  proto::AllReduceAlgorithm all_reduce = proto::AllReduceAlgorithm::direct;
  // The OpenMP teams of the network thread (the encode of an update, the state's hash):
  // train.threads, so a volunteer who gives loco one core gets one; 0: OpenMP's default.
  int threads = 0;
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
  // The dataset's train shards this peer serves to the members that ask (host/peer_shards.hpp:
  // its data cache); null: none.
  std::shared_ptr<const ShardStore> shards;
  // What serving them may take of this peer's upstream, over every asker (--peer.data-serve-rate:
  // proto/shard_serve_gate.hpp).
  proto::ServeLimits serve{};
  // For the test suite only: this peer misbehaves (compute_link.hpp: scale, segment, nan, tokens;
  // corrupt_shards: a bit of every shard piece it serves flipped).
  std::string poison;
  bool corrupt_shards = false;
  // For the test suite only: called with the round at each fault point; may end or stop the
  // process.
  std::function<void(FaultPoint, std::uint64_t round)> fault_point;
};

class SwarmSession {
 public:
  SwarmSession(boost::asio::io_context& io, SwarmConfig config, const secure::KeyPair& identity,
               round::Mailbox& mailbox, round::TrafficCounters& traffic,
               round::SharedStateGuard& guard);

  // All of these on the io thread (SwarmThread posts them).
  // `genesis`: the hash of the round-0 state the run's settings give.
  void start(const Digest& genesis, std::uint64_t state_round, const Digest& state_hash);
  // A command of the compute thread (after start).
  void run(const round::NetworkSide::Command& command);
  // Leaves the run (ComputeLink::leave) and closes every connection.
  void leave(const std::string& reason);
  // The dataset's shards (shard_link.hpp, after start): the members of the view but this peer,
  // and a piece asked of one (`done` on this thread; nothing after cancel_piece).
  ShardPeers shard_peers() const;
  std::uint64_t ask_piece(const proto::PeerKey& peer, const proto::ShardRequest& request,
                          ShardService::Done done);
  void cancel_piece(std::uint64_t id);
  // Set at construction: any thread may ask.
  bool gossip() const { return config_.gossip_group != 0; }
  int threads() const { return config_.threads; }

 private:
  // After any input to the core: its events to the compute link (or the log), its messages to
  // the mesh (or through a relayed link, whose deliveries go back to the core until nothing
  // moves), the tracker client's to the link, and its timer armed.
  void drive();
  void on_core_event(proto::PeerEvent& event);
  void on_mesh_message(const proto::PeerKey& from, proto::MessageType type,
                       std::span<const std::byte> body);
  // A message from a member, directly or through a relay (relayed_links.hpp).
  void to_core(const proto::PeerKey& from, proto::MessageType type,
               std::span<const std::byte> body);
  void on_relay_data(const proto::PeerKey& from, std::span<const std::byte> body);
  // The relayed links' output: their relay_data to the mesh, messages and losses to the core
  // (true when it gave the core any: its outputs are to be drained again).
  bool drain_relayed();
  // Relayed bytes dropped because their end or relay is not in this peer's view (yet): the first
  // kLoggedRelayedDrops are logged, so that a relayed link that never forms says why.
  void relayed_dropped(const std::string& what);
  void arm_timer();
  void reach(FaultPoint point, std::uint64_t round) const;

  boost::asio::io_context& io_;
  SwarmConfig config_;
  const secure::KeyPair& identity_;
  round::Mailbox& mailbox_;
  round::TrafficCounters& traffic_;
  round::SharedStateGuard& guard_;
  std::unique_ptr<proto::PeerCore> core_;        // from start(): the join needs the mesh's port
  std::unique_ptr<round::ComputeLink> compute_;  // with the core
  std::shared_ptr<net::TrackerLink> link_;
  std::shared_ptr<net::PeerMesh> mesh_;
  std::shared_ptr<net::RouterPort> router_port_;  // null: nothing mapped
  std::unique_ptr<net::RelayedLinks> relayed_;    // with the core
  std::unique_ptr<ShardService> shards_;          // with the core
  boost::asio::steady_timer timer_;               // the core's deadline
  TimePoint timer_at_ = kNever;
  static constexpr std::uint64_t kLoggedRelayedDrops = 16;
  std::uint64_t relayed_drops_ = 0;
};

}  // namespace loco::swarm
