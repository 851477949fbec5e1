#pragma once
// A volunteer as a simulated process. It drives the same proto/ cores as loco-peer's swarm
// session (src/swarm/swarm_session.cpp and swarm_group.cpp), in one thread of virtual time:
//   - proto::TrackerClient over a connection to the tracker node, reconnecting after a loss
//     with the backoff of net::TrackerLink (0.5 s doubling to 10 s);
//   - the all-reduce of each group it is in, ring or direct (PeerWorld::all_reduce; chunks that
//     arrive before its group does wait, as in the session), then the outer step on the mean,
//     round_done(hash), and on commit the install of that state (checkpointed: the slot's disk);
//   - in gossip mode (PeerWorld::gossip_group ≥ 2) no ready and no commit: after its inner phase
//     a peer averages its state and update in the group proto::gossip_groups gives it from its
//     view, applies the outer step at once, and trains on (peer_gossip.cpp);
//   - proto::StateFetcher when the tracker says resync, proto::StateServer for the others;
//   - the inner phase as a ComputeModel: H x its step time, then a pseudo-gradient.
// It accepts messages from peers only while they are members of its current signed view, as
// the mesh admits only those (net/peer_mesh.hpp).
//
// What outlives a process (its key, its link, its checkpoint) is in PeerDisk, owned by the
// Swarm; a crash destroys the PeerNode, and pending events find it gone (weak pointers).

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/early_messages.hpp"
#include "loco/proto/state_transfer.hpp"
#include "loco/proto/tracker_client.hpp"
#include "loco/sim/behaviour.hpp"
#include "loco/sim/compute_model.hpp"
#include "loco/sim/directory.hpp"
#include "loco/sim/gossip_groupings.hpp"
#include "loco/sim/ledger.hpp"

namespace loco::sim {

// A peer's state: θ ‖ v at a round.
struct PeerState {
  std::uint64_t round = 0;
  std::vector<float> theta;
  std::vector<float> momentum;

  std::vector<std::byte> bytes() const;
  proto::StateManifest manifest() const;
  // From a fetched state; false when the size is not dim x 2 floats.
  bool load(std::uint64_t at_round, std::span<const std::byte> bytes);
};

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
  NodeId tracker = 0;
  proto::TrackerClientConfig client;  // join fields other than the state are filled in
  std::string codec = "fp32";
  std::size_t chunk_values = std::size_t{1} << 16;
  proto::AllReduceAlgorithm all_reduce = proto::AllReduceAlgorithm::ring;
  std::size_t gossip_group = 0;  // 0: all-reduce mode; g in 2..8: gossip in groups of g
  // A group not done by then, once the run is at its round: apply alone. Long: partners are only
  // slower (crashed ones are removed by the tracker); it bounds a grouping they did not share.
  Duration gossip_wait = std::chrono::minutes(10);
  GossipGroupings* groupings = nullptr;  // gossip mode: shared by the peers
};

class PeerNode final : public NodeHandler, public std::enable_shared_from_this<PeerNode> {
 public:
  enum class Phase { joining, training, waiting, fetching };

  PeerNode(const PeerWorld& world, NodeId node, PeerDisk& disk);

  // Starts the process: from the disk's checkpoint if there is one, else from round 0.
  void start();
  // Tells the tracker it leaves, then the process ends (the Swarm kills it after a moment).
  void leave();

  Phase phase() const { return phase_; }
  const PeerState& state() const { return state_; }
  bool in_all_reduce() const {
    return all_reduce_ != nullptr && !all_reduce_->done() && !all_reduce_->failure();
  }
  std::uint64_t all_reduce_bytes_sent() const {
    return all_reduce_ ? all_reduce_->bytes_sent() : 0;
  }
  const std::vector<proto::PeerKey>& group_members() const { return group_members_; }
  std::uint64_t rounds_installed() const { return installed_; }

  void on_open(NodeId peer) override;
  void on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) override;
  void on_close(NodeId peer, const std::string& why) override;

 private:
  // The tracker connection (net::TrackerLink).
  void connect_tracker();
  void tracker_lost();
  void drive_client();
  void arm_client_timer();
  void on_client_event(const proto::ClientEvent& e);
  bool is_member(const proto::PeerKey& key) const { return client_->is_member(key); }

  // Training and rounds (swarm_group.cpp).
  void start_training();
  void finish_training();
  // `contribution`: what this member averages (its update; in gossip mode its packed state).
  void start_all_reduce(const proto::Group& group, std::span<const float> contribution);
  void pump_all_reduce();
  void on_commit(const proto::Commit& commit);
  // state_ changed to the state `manifest` describes: serve it and tell the tracker.
  void serve_current(proto::StateManifest manifest);

  // Gossip mode (peer_gossip.cpp).
  bool gossip() const { return world_.gossip_group != 0; }
  void start_gossip_round();
  bool gossip_group_whole() const;  // every member takes part in the round
  void arm_gossip_wait(std::uint64_t round);
  void gossip_view_changed();
  void apply_gossip(std::span<const float> mean, const std::vector<proto::PeerKey>& members);
  std::vector<float> packed_;  // gossip mode: θ ‖ v ‖ Δ, what this peer averages in its group
  std::vector<proto::PeerKey> gossip_group_;  // this round's group in its roster

  // Recovery.
  void start_fetch(const proto::Resync& resync);
  void pump_fetch();
  void pump_server();

  void on_peer_message(NodeId from, proto::MessageType type, std::span<const std::byte> body);
  void send_to(const proto::PeerKey& to, proto::MessageType type, std::vector<std::byte> body);
  template <typename F>
  void at(TimePoint when, F&& f);

  PeerWorld world_;
  NodeId node_;
  PeerDisk& disk_;
  proto::PeerKey key_;
  std::unique_ptr<compress::Codec> codec_;
  std::unique_ptr<proto::TrackerClient> client_;
  bool tracker_open_ = false;
  Duration backoff_ = std::chrono::milliseconds(500);
  TimePoint client_timer_ = kNever;

  Phase phase_ = Phase::joining;
  PeerState state_;
  Digest state_hash_{};         // state_'s, hashed once per state (BLAKE2b of all of it)
  std::uint64_t training_ = 0;  // which inner phase the pending timer ends

  std::uint64_t ready_round_ = 0;  // 0: not ready for any round
  proto::Ready ready_{};
  std::vector<float> delta_;
  std::vector<float> work_;
  std::unique_ptr<proto::AllReduce> all_reduce_;
  std::vector<proto::PeerKey> group_members_;
  std::size_t trim_ = 0;  // of the running all-reduce
  std::uint32_t attempt_ = 0;
  bool mean_done_ = false;
  bool failure_reported_ = false;
  proto::EarlyMessages early_{1024};  // ring chunks of a group not started here yet
  std::optional<PeerState> tentative_;
  proto::StateManifest tentative_manifest_;
  Digest tentative_hash_{};

  std::unique_ptr<proto::StateFetcher> fetcher_;
  proto::Resync fetching_{};
  TimePoint fetch_timer_ = kNever;
  proto::StateServer server_;
  std::shared_ptr<const std::vector<std::byte>> served_;
  std::uint64_t installed_ = 0;
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
