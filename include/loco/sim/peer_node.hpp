#pragma once
// A volunteer as a simulated process: the simulated driver of proto::PeerCore, the same core
// loco-peer's swarm session drives (swarm/swarm_session.hpp), in virtual time. Its process trains
// in one of two ways, and either talks to the core only through a round::ComputeLink, as
// loco-peer's compute thread does:
//   - with a real strategy (PeerWorld::strategy, strategy_process.hpp): a compute thread runs
//     loco-peer's SwarmGroup and the strategy, so nothing of the round is the simulator's own;
//   - modelled, for thousands of peers (modelled_process.hpp): θ ‖ v and a ComputeModel standing
//     in for the inner loop and DiLoCo's outer step, on the event loop, whose round follows the
//     rule SwarmGroup follows (round/round_step.hpp).
// What the node adds is what a simulated process is, not protocol:
//   - its tracker connection over a simulated link, driving the core's TrackerClient and
//     reconnecting after a loss to the next of the tracker's addresses with
//     proto::TrackerAddresses (as net::TrackerLink);
//   - the core's events told to the Ledger (the collectives, the commits it installs, a strategy
//     peer's fetches), which checks the swarm's invariants, then handed to the link;
//   - a modelled liar's lies on the wire (behaviour.hpp, lying_member.hpp).
// It accepts messages from peers only while they are members of its current signed view, as
// the mesh admits only those (net/peer_mesh.hpp).
//
// What outlives a process (its key, its link, its checkpoint) is in PeerDisk, owned by the
// Swarm; a crash destroys the PeerNode, and pending events find it gone (weak pointers).

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "loco/proto/awaiting_links.hpp"
#include "loco/proto/peer_core.hpp"
#include "loco/proto/tracker_addresses.hpp"
#include "loco/round/compute_link.hpp"
#include "loco/sim/behaviour.hpp"
#include "loco/sim/compute_model.hpp"
#include "loco/sim/directory.hpp"
#include "loco/sim/gossip_groupings.hpp"
#include "loco/sim/ledger.hpp"
#include "loco/sim/lying_member.hpp"
#include "loco/sim/manifest_memo.hpp"
#include "loco/sim/modelled_process.hpp"
#include "loco/sim/strategy_process.hpp"

namespace loco::sim {

struct PeerDisk {
  std::uint64_t index = 0;  // the peer's number in its Swarm (its data, its noise)
  secure::KeyPair identity;
  Duration step_time{};
  std::optional<PeerState> checkpoint;  // the last state it installed or fetched
  std::uint64_t phases = 0;             // inner phases run, over every process (noise stream)
  Behaviour behaviour = Behaviour::honest;
  std::vector<float> first_update;  // what a stale member replays
};

struct PeerWorld {
  EventLoop* loop = nullptr;
  Network* network = nullptr;
  const Directory* directory = nullptr;
  ComputeModel* compute = nullptr;
  Ledger* ledger = nullptr;
  // The tracker's nodes: one, or each replica's, walked in turn as loco-peer walks its
  // addresses (proto::TrackerAddresses).
  std::vector<NodeId> trackers;
  proto::TrackerClientConfig client;  // join fields other than the state are filled in
  std::string codec = "fp32";
  std::size_t chunk_values = std::size_t{1} << 16;
  proto::AllReduceAlgorithm all_reduce = proto::AllReduceAlgorithm::ring;
  std::size_t gossip_group = 0;  // 0: all-reduce mode; g in 2..8: gossip in groups of g
  // A group not done by then, once the run is at its round: apply alone. Long: partners are only
  // slower (crashed ones are removed by the tracker); it bounds a grouping they did not share.
  Duration gossip_wait = std::chrono::minutes(10);
  GossipGroupings* groupings = nullptr;  // gossip mode: shared by the peers
  // Modelled peers' state manifests, shared by the peers (manifest_memo.hpp); null: each hashes.
  ManifestMemo* manifests = nullptr;
  // Set: every peer trains with this run's strategy (strategy_process.hpp); null: modelled.
  const StrategyRun* strategy = nullptr;
  proto::RelayBudget relay{};  // what a reachable peer relays (proto/relay_core.hpp)
  // 0: a modelled peer's phase is H of its steps. Else the phase is clocked by time: it lasts
  // this long and holds the steps that fit (at least one), as strategy.round-seconds does.
  Duration phase_time{0};
};

class PeerNode final : public NodeHandler, public std::enable_shared_from_this<PeerNode> {
 public:
  PeerNode(const PeerWorld& world, NodeId node, PeerDisk& disk);

  // Starts the process: from the disk's checkpoint if there is one, else from round 0.
  void start();
  // Tells the tracker it leaves, then the process ends (the Swarm kills it after a moment).
  void leave();

  // Modelled peers only.
  const PeerState& state() const { return modelled_->state(); }
  // The round and hash of the state it holds (a strategy peer's: committed with it or fetched).
  std::uint64_t held_round() const { return modelled_ ? modelled_->state().round : held_round_; }
  const Digest& held_hash() const { return modelled_ ? modelled_->state_hash() : held_hash_; }
  // The round this member reported done and the hash it reported, whose commit has not reached it
  // yet (round 0: none): the state it holds once the round commits with that hash.
  std::uint64_t reported_round() const { return core_ ? core_->ready_round() : 0; }
  Digest reported_hash() const { return core_ ? core_->reported() : Digest{}; }
  // Still in the run: not told to leave, and a strategy peer's training not over (it left).
  bool in_run() const { return !leaving_ && !(process_ && process_->finished()); }
  // A strategy peer's compute thread (null for a modelled peer).
  const StrategyProcess* process() const { return process_.get(); }
  bool in_all_reduce() const { return core_->collective_running(); }
  std::uint64_t all_reduce_bytes_sent() const { return core_->collective_bytes_sent(); }
  const std::vector<proto::PeerKey>& group_members() const { return core_->group(); }
  std::uint64_t rounds_installed() const {
    return modelled_ ? modelled_->rounds_installed() : installed_;
  }
  std::uint64_t bytes_relayed() const { return core_ ? core_->relay().bytes_relayed() : 0; }

  void on_open(NodeId peer) override;
  void on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) override;
  void on_close(NodeId peer, const std::string& why) override;

  // For its process (strategy_process.hpp, modelled_process.hpp), on the event loop.
  TimePoint now() const { return world_.loop->now(); }
  const proto::PeerKey& key() const { return key_; }
  // Creates the protocol core and its link to the process, joining with the state of `round`
  // and `hash`, and connects.
  void start_core(const Digest& genesis, std::uint64_t round, const Digest& hash);
  // A command of the process, on the compute link; the core's outputs follow.
  void run(const round::NetworkSide::Command& command);
  // The link, for a command given while the process takes an event (the node drives the core
  // once the event is taken).
  round::ComputeLink& link() { return *link_; }
  // Runs `action` at `when` if this process still lives then.
  void schedule_at(TimePoint when, std::function<void(PeerNode&)> action);

 private:
  void tracker_lost();
  NodeId tracker() const { return world_.trackers[addresses_.current()]; }
  bool is_tracker(NodeId node) const {
    return std::find(world_.trackers.begin(), world_.trackers.end(), node) != world_.trackers.end();
  }
  // After any input: the client's events to the core, the core's events to this process, their
  // messages to the network, and one timer for the earlier of their deadlines.
  void drive();
  void arm_timer();
  // A message of the core to a member: on the connection that member opened when the core says
  // so (proto/link_direction.hpp), held until it is open.
  void send_to_peer(proto::PeerCore::Send t);
  // relay_data from `from`: relayed on, or (this peer an end) the sender's message within, in the
  // clear as the simulator's links carry every message (network.hpp).
  void on_relay_data(const proto::PeerKey& from, std::span<const std::byte> body);
  // One event of the core: the Ledger told, then the event handed to the process's link.
  void on_core_event(proto::PeerEvent& e);
  // A collective begins: the Ledger told what this peer averages; a modelled liar prepares.
  void on_collective_started(const proto::PeerEvent& e);

  template <typename F>
  void at(TimePoint when, F&& f);

  PeerWorld world_;
  NodeId node_;
  PeerDisk& disk_;
  proto::PeerKey key_;
  std::unique_ptr<proto::PeerCore> core_;
  // Whether a peer's message comes from a member of the view. loco-peer checks it once, at the
  // handshake; the simulator, which has none, at every message. The last sender found, and the
  // view then (TrackerClient::view_changes()): a ring's chunks come from one neighbour, so that
  // check is a lookup per sender and view, not per message (docs/SCALE.md).
  bool sent_by_member(const proto::PeerKey& key);
  struct MemberSeen {
    proto::PeerKey key;
    std::uint64_t view_changes = 0;
  };
  std::optional<MemberSeen> member_seen_;  // of core_'s view; reset with core_
  // The node of the key this peer last sent to (a ring's successor): the directory never moves a
  // key, so this saves a hash lookup per message.
  std::optional<std::pair<proto::PeerKey, NodeId>> last_sent_to_;
  NodeId node_of(const proto::PeerKey& key);
  bool tracker_open_ = false;
  proto::AwaitingLinks<NodeId, proto::PeerCore::Send> awaiting_;  // for the member to connect
  proto::TrackerAddresses addresses_{world_.trackers.size()};
  TimePoint timer_ = kNever;

  std::optional<LyingMember> lying_member_;  // Behaviour::wrong_mean, disputer
  // A strategy peer's state, as its commits and fetches say (a modelled peer's is its own).
  std::uint64_t installed_ = 0;
  std::uint64_t held_round_ = 0;
  Digest held_hash_{};
  bool leaving_ = false;  // leave() was called

  // The hand-off with the process, and the process: a strategy peer's compute thread, or a
  // modelled peer (destroyed first).
  std::unique_ptr<round::ComputeLink> link_;
  std::unique_ptr<StrategyProcess> process_;
  std::unique_ptr<ModelledProcess> modelled_;
};

// Runs f(*this) at `when` (not before now) if this process still lives then.
template <typename F>
void PeerNode::at(TimePoint when, F&& f) {
  world_.loop->at(std::max(when, world_.loop->now()),
                  [weak = weak_from_this(), f = std::forward<F>(f)]() mutable {
                    if (auto self = weak.lock()) f(*self);
                  });
}

}  // namespace loco::sim
