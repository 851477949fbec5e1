#include "loco/sim/swarm.hpp"

#include <array>
#include <cmath>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "loco/train/timed_rounds.hpp"

namespace loco::sim {
namespace {

// Streams of the seed.
enum : std::uint64_t { kKeys = 1, kDraws = 2, kNetwork = 3, kCompute = 4 };

secure::KeyPair key_from(std::uint64_t seed, std::uint64_t index) {
  std::array<std::uint8_t, 32> bytes{};
  for (std::size_t i = 0; i < bytes.size(); i += 8) {
    const std::uint64_t word = counter_u64(seed, kKeys, index * 4 + i / 8);
    for (std::size_t b = 0; b < 8; ++b) bytes[i + b] = static_cast<std::uint8_t>(word >> (8 * b));
  }
  return secure::KeyPair::from_seed(bytes);
}

SwarmConfig with_defaults(SwarmConfig c) {
  if (c.strategy) {
    if (c.gossip_group != 0)
      throw Error(ErrorCategory::invalid_argument,
                  "the simulator's strategy peers average in the tracker's groups, not in gossip");
    c.tracker.settings = c.strategy->settings;
    if (c.tracker.final_round == 0) c.tracker.final_round = train::final_round(c.strategy->config);
    if (c.tracker.custody.every == 0) c.tracker.custody.every = 10;
    train::apply_timed_rounds(c.strategy->config, c.tracker);
    c.codec = train::swarm_codec(c.strategy->config);
    c.spread_every = Duration{0};
  }
  if (c.tracker.run_id.empty()) c.tracker.run_id = "sim";
  c.tracker.gossip = c.gossip_group != 0;
  c.tracker.admission.kind = proto::AdmissionPolicy::Kind::open;
  if (c.tracker.settings.empty()) {
    c.tracker.settings = {{"model", "noisy-quadratic"}};
    // What loco-peer's run settings say (train/run_settings.cpp): the tracker plans relays by it.
    if (c.all_reduce == proto::AllReduceAlgorithm::ring)
      c.tracker.settings.push_back({"strategy.all-reduce", "ring"});
  }
  c.tracker.shard_count =
      std::max<std::uint32_t>(c.tracker.shard_count, static_cast<std::uint32_t>(4 * c.peers + 16));
  c.network.seed = counter_u64(c.seed, kNetwork, 0);
  c.compute.seed = counter_u64(c.seed, kCompute, 0);
  return c;
}

}  // namespace

Swarm::Swarm(SwarmConfig config)
    : config_(with_defaults(std::move(config))),
      compute_(config_.model ? config_.model : std::make_shared<NoisyQuadratic>(config_.compute)),
      ledger_(config_.mean_tolerance),
      tracker_identity_(key_from(config_.seed, ~std::uint64_t{0})),
      draws_(counter_u64(config_.seed, kDraws, 0)) {
  if (config_.strategy) {
    config_.tracker.genesis = config_.strategy->genesis;
  } else {
    const std::vector<float> theta = compute_->genesis();
    const PeerState genesis{
        .round = 0, .theta = theta, .momentum = std::vector<float>(theta.size(), 0.0f)};
    config_.tracker.genesis = genesis.manifest().state_hash();
  }
  network_ = std::make_unique<Network>(loop_, config_.network);
  std::vector<NodeId> trackers;
  if (config_.replicas > 0) {
    LOCO_ASSERT(!config_.check_holding, "the holding check reads one tracker");
    add_replicas();
    for (const auto& r : replicas_) trackers.push_back(r->node());
  } else {
    const NodeId tracker_node = network_->add_node(config_.tracker_link);
    directory_.add(tracker_node, tracker_identity_.public_key());
    tracker_ = std::make_unique<TrackerNode>(loop_, *network_, tracker_node, config_.tracker,
                                             tracker_identity_, directory_);
    tracker_->set_observer([this](const proto::TrackerEvent& e) { observe(*tracker_, e); });
    trackers.push_back(tracker_node);
  }

  world_ = PeerWorld{.loop = &loop_,
                     .network = network_.get(),
                     .directory = &directory_,
                     .compute = compute_.get(),
                     .ledger = &ledger_,
                     .trackers = trackers,
                     .client =
                         proto::TrackerClientConfig{
                             .run_id = config_.tracker.run_id,
                             .tracker_key = tracker_identity_.public_key(),
                             .join = proto::JoinRequest{.software = "loco-sim",
                                                        .listen_address = {},
                                                        .upload_bps = 0,
                                                        .credential = {},
                                                        .settings = config_.tracker.settings,
                                                        .genesis = config_.tracker.genesis,
                                                        .state_round = 0,
                                                        .state_hash = {}},
                             // The peers' clients are handed the same views: verified once,
                             // each entry hashed once.
                             .signature_memo = std::make_shared<secure::SignatureMemo>(),
                             .lanes_memo = std::make_shared<proto::MemberLanesMemo>(),
                             .addresses = trackers.size()},
                     .codec = config_.codec,
                     .chunk_values = config_.chunk_values,
                     .all_reduce = config_.all_reduce,
                     .gossip_group = config_.gossip_group,
                     .gossip_wait = config_.gossip_wait,
                     .groupings = &groupings_,
                     .manifests = &manifests_,
                     .strategy = config_.strategy.get(),
                     .relay = config_.relay,
                     .phase_time = config_.phase_time};
  for (std::size_t i = 0; i < config_.peers; ++i) add_peer();
  initial_peers_ = config_.peers;
  if (config_.check_holding) loop_.set_after_each([this] { holding_.check(*this); });
}

Swarm::~Swarm() = default;

void Swarm::observe(const TrackerNode& node, const proto::TrackerEvent& e) {
  using Kind = proto::TrackerEvent::Kind;
  if (e.kind == Kind::round_committed) {
    ++rounds_committed_;
    const proto::TrackerSnapshot s = node.core()->snapshot();
    ledger_.committed(loop_.now(), s.committed_round, s.committed_hash);
  } else if (e.kind == Kind::round_aborted) {
    ++rounds_aborted_;
  } else if (e.kind == Kind::left && e.text.starts_with("evicted")) {
    ++evictions_;
  }
  if (tracker_watcher_) tracker_watcher_(e);
}

// Each on a host of its own with the tracker's link, sharing the run's key (docs/TRACKER.md:
// the replicas share one key), its client of the store numbered as the replica.
void Swarm::add_replicas() {
  store_ = std::make_unique<StoreModel>(loop_);
  for (std::size_t i = 0; i < config_.replicas; ++i) {
    const NodeId node = network_->add_node(config_.tracker_link);
    replicas_.push_back(std::make_unique<ReplicaNode>(
        loop_, *network_, node, config_.tracker, tracker_identity_, directory_, *store_, i,
        replica::CandidateConfig{.prefix = "/loco/" + config_.tracker.run_id + "/",
                                 .name = Directory::address(node),
                                 .lease = config_.replica_lease}));
    TrackerNode& tracker = replicas_.back()->tracker();
    tracker.set_observer([this, &tracker](const proto::TrackerEvent& e) { observe(tracker, e); });
  }
}

std::size_t Swarm::add_peer() {
  const std::size_t i = disks_.size();
  const LinkRanges& r = config_.links;
  link::LinkSettings link;
  link.latency =
      r.latency_min +
      Duration(static_cast<Duration::rep>(
          draws_.uniform() * static_cast<float>((r.latency_max - r.latency_min).count())));
  link.jitter = std::min(r.jitter, link.latency);
  link.loss = r.loss;
  if (r.bandwidth_min != link::kUnlimited) {
    const double lo = std::log(static_cast<double>(r.bandwidth_min));
    const double hi = std::log(static_cast<double>(r.bandwidth_max));
    link.upload = static_cast<link::BitRate>(std::exp(lo + (hi - lo) * draws_.uniform()));
  }
  link.download = link.upload;
  const NodeId node = network_->add_node(link);
  const double tail =
      static_cast<double>(i % 100) < config_.slow_tail * 100 ? config_.slow_tail_factor : 1.0;
  const double factor = tail * std::exp(config_.step_time_spread * draws_.normal());
  auto disk = std::make_unique<PeerDisk>(PeerDisk{
      .index = i,
      .identity = key_from(config_.seed, i),
      .step_time = Duration(
          static_cast<Duration::rep>(static_cast<double>(config_.step_time.count()) * factor)),
      .checkpoint = std::nullopt,
      .phases = 0,
      .behaviour = config_.behaviours.contains(i) ? config_.behaviours.at(i) : Behaviour::honest,
      .first_update = {}});
  directory_.add(node, disk->identity.public_key());
  disks_.push_back(std::move(disk));
  nodes_.push_back(node);
  processes_.push_back(nullptr);
  stops_.push_back(0);
  return i;
}

void Swarm::start() {
  if (tracker_) tracker_->start();
  for (const auto& r : replicas_) r->start();
  for (std::size_t i = 0; i < disks_.size(); ++i) start_peer(i);
  if (config_.spread_every > Duration{0})
    loop_.after(config_.spread_every, [this] { report_spread(); });
}

void Swarm::report_spread() {
  const double rms = spread();
  if (tracker_) tracker_->set_spread(rms);
  for (const auto& r : replicas_) r->tracker().set_spread(rms);
  loop_.after(config_.spread_every, [this] { report_spread(); });
}

bool Swarm::run_for(Duration span, std::uint64_t max_events) {
  return loop_.run_until(loop_.now() + span, max_events);
}

bool Swarm::run_until(TimePoint t, std::uint64_t max_events) {
  return loop_.run_until(t, max_events);
}

void Swarm::start_peer(std::size_t i) {
  LOCO_ASSERT(!processes_[i], "a peer started twice");
  PeerWorld world = world_;
  world.client.join.upload_bps = network_->settings(nodes_[i]).upload;
  if (const auto own = config_.relay_of_peer.find(i); own != config_.relay_of_peer.end())
    world.relay = own->second;
  processes_[i] = std::make_shared<PeerNode>(world, nodes_[i], *disks_[i]);
  processes_[i]->start();
}

void Swarm::crash_peer(std::size_t i, bool notify) {
  if (!processes_[i]) return;
  ++stops_[i];
  network_->kill(nodes_[i], notify);
  processes_[i].reset();
}

void Swarm::restart_peer(std::size_t i, bool with_checkpoint) {
  crash_peer(i);
  if (!with_checkpoint) disks_[i]->checkpoint.reset();
  start_peer(i);
}

void Swarm::leave_peer(std::size_t i) {
  if (!processes_[i]) return;
  ++stops_[i];
  processes_[i]->leave();
  // The leave message goes out; then the process ends (SwarmGroup::leave waits 2 s at most).
  std::weak_ptr<PeerNode> leaving = processes_[i];
  loop_.after(std::chrono::seconds(2), [this, i, leaving] {
    if (processes_[i] && processes_[i] == leaving.lock()) crash_peer(i);
  });
}

Duration Swarm::exponential(double rate_per_s) {
  const double u = std::max(1e-9, 1.0 - static_cast<double>(draws_.uniform()));
  return Duration(static_cast<Duration::rep>(-std::log(u) / rate_per_s * 1e9));
}

void Swarm::churn(double fraction_per_hour) {
  const double rate = fraction_per_hour * static_cast<double>(initial_peers_) / 3600.0;
  if (rate <= 0) return;
  churn_departure(rate);
  churn_arrival(rate);
}

void Swarm::churn_departure(double rate_per_s) {
  loop_.after(exponential(rate_per_s), [this, rate_per_s] {
    std::vector<std::size_t> live;
    for (std::size_t i = 0; i < processes_.size(); ++i)
      if (processes_[i]) live.push_back(i);
    if (!live.empty()) {
      const std::size_t i = live[draws_.below(live.size())];
      switch (draws_.below(3)) {
        case 0: crash_peer(i, true); break;
        case 1: crash_peer(i, false); break;
        default: leave_peer(i); break;
      }
    }
    churn_departure(rate_per_s);
  });
}

void Swarm::churn_arrival(double rate_per_s) {
  loop_.after(exponential(rate_per_s), [this, rate_per_s] {
    std::vector<std::size_t> down;
    for (std::size_t i = 0; i < processes_.size(); ++i)
      if (!processes_[i]) down.push_back(i);
    if (!down.empty() && draws_.below(2) == 0) {
      const std::size_t i = down[draws_.below(down.size())];
      if (draws_.below(2) == 0) disks_[i]->checkpoint.reset();
      start_peer(i);
    } else {
      start_peer(add_peer());
    }
    churn_arrival(rate_per_s);
  });
}

double Swarm::spread() const {
  if (config_.strategy) return 0;
  std::vector<const PeerState*> live;
  for (const auto& p : processes_)
    if (p) live.push_back(&p->state());
  if (live.empty()) return 0;
  const std::size_t dim = live.front()->theta.size();
  std::vector<double> mean(dim, 0.0);
  for (const PeerState* s : live)
    for (std::size_t j = 0; j < dim; ++j) mean[j] += s->theta[j];
  for (double& m : mean) m /= static_cast<double>(live.size());
  double squares = 0;
  for (const PeerState* s : live)
    for (std::size_t j = 0; j < dim; ++j)
      squares += (s->theta[j] - mean[j]) * (s->theta[j] - mean[j]);
  return std::sqrt(squares / static_cast<double>(dim * live.size()));
}

double Swarm::mean_loss() const {
  if (config_.strategy) return 0;
  double sum = 0;
  std::size_t n = 0;
  for (const auto& p : processes_) {
    if (!p) continue;
    sum += compute_->loss(p->state().theta);
    ++n;
  }
  return n == 0 ? 0 : sum / static_cast<double>(n);
}

}  // namespace loco::sim
