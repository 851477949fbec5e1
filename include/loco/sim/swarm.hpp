#pragma once
// A whole simulated run: one tracker node (or tracker replicas over a store), volunteers with their
// own links and step times, the faults a test or a benchmark schedules (crash, restart with or
// without the checkpoint, a clean leave, a vanished host, partitions, tracker crash and restart)
// and churn as a process (departures and arrivals at a rate per hour). Everything random is drawn
// from the seed, so the same seed gives the same trace hash (EventLoop::trace_hash()).
//
//   Swarm swarm(config);          // nodes and links drawn from config.seed
//   swarm.start();                // the tracker and every peer start at t = 0
//   swarm.run_for(minutes(10));   // false: the event budget ran out (a livelock)
//   swarm.ledger().violations()   // the invariants (ledger.hpp), checked as it ran

#include <map>
#include <memory>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"
#include "loco/sim/holding_check.hpp"
#include "loco/sim/noisy_quadratic.hpp"
#include "loco/sim/peer_node.hpp"
#include "loco/sim/replica_node.hpp"
#include "loco/sim/store_model.hpp"
#include "loco/sim/tracker_node.hpp"

namespace loco::sim {

struct LinkRanges {
  Duration latency_min = std::chrono::milliseconds(20);  // one way, uniform in [min, max]
  Duration latency_max = std::chrono::milliseconds(200);
  link::BitRate bandwidth_min = 10'000'000;  // upload = download, log-uniform in [min, max];
                                             // kUnlimited: no limit
  link::BitRate bandwidth_max = 1'000'000'000;
  Duration jitter{0};
  double loss = 0;
};

struct SwarmConfig {
  std::uint64_t seed = 1;
  std::size_t peers = 4;
  NoisyQuadraticConfig compute;  // the inner loop, unless `model` is set
  // A real model's inner loop instead (ModelCompute), shared by the peers; null: the noisy
  // quadratic of `compute`.
  std::shared_ptr<ComputeModel> model;
  // Peers that train with a real strategy instead (strategy_process.hpp): its codec and settings
  // are the run's; `compute`, `model` and checkpoints are not used, nor `behaviours` but for a
  // SparseLoCo member's messages (lying_gather.hpp) (a restarted
  // peer starts from the genesis and fetches the run's state), and gossip mode is not available.
  std::shared_ptr<const StrategyRun> strategy;
  // With a strategy, the tracker announces the run's final round (train/run_end.hpp) and keeps
  // custody copies every 10 rounds, as loco-tracker does by default, unless `tracker` sets them.
  Duration step_time = std::chrono::milliseconds(100);
  double step_time_spread = 0;  // σ of the log of a peer's step time (heterogeneous compute)
  // The share of peers 10x slower on top of the spread (the tail of volunteer machines): each peer
  // whose index mod 100 is below 100 x this.
  double slow_tail = 0;
  double slow_tail_factor = 10;  // how many times slower those peers are
  Duration phase_time{0};        // PeerWorld::phase_time: 0, H steps a phase; else by time
  LinkRanges links;
  link::LinkSettings tracker_link;  // the tracker's own access link
  NetworkConfig network;
  proto::TrackerCoreConfig tracker;  // run_id, admission and settings are filled in if empty
  std::string codec = "fp32";
  std::size_t chunk_values = std::size_t{1} << 16;
  // How a group averages: the ring (2(N − 1) latencies, two links a member) or the direct
  // exchange (2 latencies, a link to every member; loco-peer's default, strategy.all-reduce).
  proto::AllReduceAlgorithm all_reduce = proto::AllReduceAlgorithm::ring;
  double mean_tolerance = 1e-5;  // Ledger: negative skips the check of every ring's mean
  std::size_t gossip_group = 0;  // 0: all-reduce mode; g in 2..8: gossip in groups of g
  Duration gossip_wait = std::chrono::minutes(10);  // PeerWorld::gossip_wait
  // How often the tracker node learns the live peers' spread (TrackerStatus::spread); 0: never.
  // The simulator reads it off the peers' states: a real tracker would need their reports.
  Duration spread_every = std::chrono::seconds(60);
  // Members that lie (behaviour.hpp), by peer index; every other member is honest.
  std::map<std::size_t, Behaviour> behaviours;
  // What each reachable peer relays for pairs of unreachable ones (proto/relay_core.hpp).
  proto::RelayBudget relay{};
  std::map<std::size_t, proto::RelayBudget> relay_of_peer;  // by peer index, instead of `relay`
  // After every event, that the run's committed state is held by the tracker or a live member
  // (holding_check.hpp; a pass over the peers each event, so off for the largest swarms).
  bool check_holding = false;
  // Tracker replicas (replica_node.hpp) over the simulator's store (store_model.hpp) instead of
  // one tracker with its own disk: 0, one tracker (tracker()); n, n replicas of one key
  // (replica(i)), whose addresses the peers walk as loco-peer does. Not with check_holding.
  std::size_t replicas = 0;
  std::chrono::seconds replica_lease{3};
};

class Swarm {
 public:
  explicit Swarm(SwarmConfig config);
  ~Swarm();

  void start();
  bool run_for(Duration span, std::uint64_t max_events = 100'000'000);
  bool run_until(TimePoint t, std::uint64_t max_events = 100'000'000);

  // Peers, by index.
  std::size_t add_peer();  // a new volunteer, not started
  std::size_t peer_count() const { return disks_.size(); }
  void start_peer(std::size_t i);
  void crash_peer(std::size_t i, bool notify = true);  // notify false: the host vanishes
  void restart_peer(std::size_t i, bool with_checkpoint);
  void leave_peer(std::size_t i);  // a clean leave: tells the tracker, then stops
  bool peer_up(std::size_t i) const { return processes_[i] != nullptr; }
  // How often the swarm stopped peer i (a crash, a restart, a clean leave): the faults.
  std::uint64_t stops(std::size_t i) const { return stops_.at(i); }
  bool gossip() const { return config_.gossip_group != 0; }
  const PeerNode& peer(std::size_t i) const { return *processes_.at(i); }
  NodeId peer_node(std::size_t i) const { return nodes_.at(i); }
  const proto::PeerKey& peer_key(std::size_t i) const {
    return disks_.at(i)->identity.public_key();
  }

  void crash_tracker(bool notify = true) { tracker().crash(notify); }
  void restart_tracker() { tracker().start(); }

  // From now on, departures and arrivals each at `fraction_per_hour` x the starting number of
  // peers per hour (Poisson). A departure picks a live peer: a crash, a vanished host or a clean
  // leave; an arrival restarts a departed peer (with its checkpoint or without) or adds a new one.
  void churn(double fraction_per_hour);

  EventLoop& loop() { return loop_; }
  Network& network() { return *network_; }
  TrackerNode& tracker() {
    LOCO_ASSERT(tracker_ != nullptr, "a swarm of tracker replicas has no one tracker");
    return *tracker_;
  }
  // With SwarmConfig::replicas.
  std::size_t replica_count() const { return replicas_.size(); }
  ReplicaNode& replica(std::size_t i) { return *replicas_.at(i); }
  StoreModel& store() { return *store_; }
  // Also tells `watcher` every tracker event, after the swarm's own bookkeeping (set_observer on
  // tracker() would replace that).
  void watch_tracker(TrackerNode::Observer watcher) { tracker_watcher_ = std::move(watcher); }
  Ledger& ledger() { return ledger_; }
  const HoldingCheck& holding() const { return holding_; }
  ComputeModel& compute() const { return *compute_; }
  std::uint64_t rounds_committed() const { return rounds_committed_; }
  std::uint64_t rounds_aborted() const { return rounds_aborted_; }
  std::uint64_t evictions() const { return evictions_; }
  // The live modelled peers' states: how far apart they are (RMS over peers of ‖θ_i − θ̄‖ /
  // √dim), and the mean loss.
  double spread() const;
  double mean_loss() const;  // runs the model's evaluation for each live peer

 private:
  void churn_departure(double rate_per_s);
  void churn_arrival(double rate_per_s);
  Duration exponential(double rate_per_s);
  void report_spread();
  // The swarm's bookkeeping of a tracker event of `node`'s core.
  void observe(const TrackerNode& node, const proto::TrackerEvent& e);
  void add_replicas();

  SwarmConfig config_;
  EventLoop loop_;
  std::unique_ptr<Network> network_;
  Directory directory_;
  std::shared_ptr<ComputeModel> compute_;
  Ledger ledger_;
  secure::KeyPair tracker_identity_;
  std::unique_ptr<TrackerNode> tracker_;  // null with replicas
  std::unique_ptr<StoreModel> store_;
  std::vector<std::unique_ptr<ReplicaNode>> replicas_;
  TrackerNode::Observer tracker_watcher_;
  GossipGroupings groupings_;
  ManifestMemo manifests_;
  PeerWorld world_;
  std::vector<std::unique_ptr<PeerDisk>> disks_;
  std::vector<NodeId> nodes_;
  std::vector<std::shared_ptr<PeerNode>> processes_;
  std::vector<std::uint64_t> stops_;
  HoldingCheck holding_;
  Rng draws_;  // links, step times, churn
  std::size_t initial_peers_ = 0;
  std::uint64_t rounds_committed_ = 0;
  std::uint64_t rounds_aborted_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace loco::sim
