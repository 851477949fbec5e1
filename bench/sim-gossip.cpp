// Gossip against all-reduce in the simulator with a real model (docs/SCALE.md): N simulated peers
// (default 32) each train configs/sim-model.toml's small GPT on their own shard with DiLoCo
// (H = 20, int8), over links of 100 Mbit/s and 50 ms one way, with step times spread ±10%; once
// in all-reduce mode (one group of all peers a round, the tracker's rounds) and once each in
// gossip mode with groups of 4 and of 2. Each time the live peers' mean round passes a whole
// number it samples their mean validation loss, spread (RMS distance from their mean per value)
// and bytes sent per peer. A run ends when the mean round reaches --rounds; its figures are those
// of that sample, with the virtual seconds a round took (all-reduce mode here is the simulator's
// ring: 2(N − 1) latencies a round).
// Prints a table per run to stderr, the samples to --out DIR/MODE.curve (default
// build/release/bench-sim-gossip/pN; scripts/plot-sim-gossip.sh) and, as its last line:
//   sim-gossip: peers=… rounds=… allreduce_loss=… gossip4_loss=… gossip2_loss=… gossip4_spread=…
//               gossip2_spread=… gossip4_bytes_vs_allreduce=… gossip2_bytes_vs_allreduce=…
//               allreduce_round_s=… gossip4_round_s=… gossip2_round_s=… wall_s=…
//
// Options: --peers N --rounds R --seed N --out DIR --config FILE
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "loco/cli/train_options.hpp"
#include "loco/model/model.hpp"
#include "loco/sim/model_compute.hpp"
#include "loco/sim/swarm.hpp"

namespace {

struct Options {
  std::size_t peers = 32;
  std::uint64_t rounds = 30;
  std::uint64_t seed = 1;
  std::filesystem::path out;  // default build/release/bench-sim-gossip/pN
  std::filesystem::path config = LOCO_SOURCE_DIR "/configs/sim-model.toml";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--peers")
      o.peers = std::strtoull(value, nullptr, 10);
    else if (flag == "--rounds")
      o.rounds = std::strtoull(value, nullptr, 10);
    else if (flag == "--seed")
      o.seed = std::strtoull(value, nullptr, 10);
    else if (flag == "--out")
      o.out = value;
    else if (flag == "--config")
      o.config = value;
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (o.out.empty())
    o.out = LOCO_SOURCE_DIR "/build/release/bench-sim-gossip/p" + std::to_string(o.peers);
  if (o.peers < 2 || o.rounds == 0) {
    std::fprintf(stderr, "--peers must be >= 2 and --rounds >= 1\n");
    std::exit(2);
  }
  return o;
}

struct Sample {
  double virtual_s = 0;
  double round = 0;  // the live peers' mean
  double loss = 0;   // the live peers' mean validation loss
  double spread = 0;
  double bytes_per_peer = 0;
};

double mean_round(const loco::sim::Swarm& swarm) {
  double sum = 0;
  std::size_t live = 0;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    if (!swarm.peer_up(i)) continue;
    sum += static_cast<double>(swarm.peer(i).state().round);
    ++live;
  }
  return live == 0 ? 0 : sum / static_cast<double>(live);
}

Sample sample(loco::sim::Swarm& swarm) {
  Sample s;
  s.virtual_s = std::chrono::duration<double>(swarm.loop().now().time_since_epoch()).count();
  s.round = mean_round(swarm);
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    s.bytes_per_peer += static_cast<double>(swarm.network().bytes_sent(swarm.peer_node(i)));
  s.bytes_per_peer /= static_cast<double>(swarm.peer_count());
  s.loss = swarm.mean_loss();
  s.spread = swarm.spread();
  return s;
}

Sample run(const Options& o, const loco::train::TrainConfig& model, std::size_t group,
           const std::string& name) {
  using namespace loco;
  using std::chrono::milliseconds;
  sim::SwarmConfig c;
  c.seed = o.seed;
  c.peers = o.peers;
  c.model = std::make_shared<sim::ModelCompute>(model, static_cast<std::uint32_t>(o.peers));
  c.links.latency_min = c.links.latency_max = milliseconds(50);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.tracker_link.latency = milliseconds(10);
  c.step_time = milliseconds(25);
  c.step_time_spread = 0.1;
  c.codec = model.strategy.codec_spec();
  c.gossip_group = group;
  c.mean_tolerance = -1;  // the ledger's per-ring check of every mean: not what is measured here
  c.spread_every = {};
  sim::Swarm swarm(c);

  std::ofstream curve(o.out / (name + ".curve"));
  curve << "# virtual_s mean_round loss spread bytes_per_peer\n";
  std::fprintf(
      stderr, "%s: %zu peers%s\n", name.c_str(), o.peers,
      group == 0 ? ", one group a round" : (", groups of " + std::to_string(group)).c_str());
  std::fprintf(stderr, "  %9s %10s %8s %9s %14s\n", "virtual_s", "mean_round", "loss", "spread",
               "bytes/peer");
  swarm.start();
  Sample s;
  double sampled = 0;  // the whole round last sampled
  while (s.round < static_cast<double>(o.rounds)) {
    if (!swarm.run_for(std::chrono::milliseconds(100)) ||
        swarm.loop().now().time_since_epoch() > std::chrono::hours(1)) {
      std::fprintf(stderr, "%s: no progress (event budget or an hour of virtual time)\n",
                   name.c_str());
      std::exit(1);
    }
    if (std::floor(mean_round(swarm)) <= sampled) continue;
    s = sample(swarm);
    sampled = std::floor(s.round);
    std::fprintf(stderr, "  %9.1f %10.2f %8.4f %9.5f %14.0f\n", s.virtual_s, s.round, s.loss,
                 s.spread, s.bytes_per_peer);
    curve << s.virtual_s << ' ' << s.round << ' ' << s.loss << ' ' << s.spread << ' '
          << s.bytes_per_peer << '\n';
  }
  for (const std::string& v : swarm.ledger().violations())
    std::fprintf(stderr, "VIOLATION %s\n", v.c_str());
  if (!swarm.ledger().violations().empty()) std::exit(1);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace loco;
  const Options o = parse(argc, argv);
  std::filesystem::create_directories(o.out);
  train::TrainConfig model = cli::load_train_config(o.config);
  model.train.steps = o.rounds * model.strategy.diloco_h;
  model::set_compute_threads(model.train.threads);

  const auto start = std::chrono::steady_clock::now();
  const Sample all = run(o, model, 0, "allreduce");
  const Sample g4 = run(o, model, 4, "gossip4");
  const Sample g2 = run(o, model, 2, "gossip2");
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "sim-gossip: peers=%zu rounds=%llu allreduce_loss=%.4f gossip4_loss=%.4f gossip2_loss=%.4f "
      "gossip4_spread=%.5f gossip2_spread=%.5f gossip4_bytes_vs_allreduce=%.2f "
      "gossip2_bytes_vs_allreduce=%.2f allreduce_round_s=%.2f gossip4_round_s=%.2f "
      "gossip2_round_s=%.2f wall_s=%.1f\n",
      o.peers, static_cast<unsigned long long>(o.rounds), all.loss, g4.loss, g2.loss, g4.spread,
      g2.spread, g4.bytes_per_peer / all.bytes_per_peer, g2.bytes_per_peer / all.bytes_per_peer,
      all.virtual_s / all.round, g4.virtual_s / g4.round, g2.virtual_s / g2.round, wall);
  return 0;
}
