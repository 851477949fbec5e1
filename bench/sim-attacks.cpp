// Members that lie, measured in the simulator with a real model (docs/SECURITY.md, "Measured"):
// 8 simulated peers train configs/sim-model.toml's small GPT with DiLoCo (H = 20, int8) over the
// direct exchange for --rounds rounds, once clean and once per attack with 1 and then 2 of the 8
// lying (sim/behaviour.hpp: scaled ×1000, sign-flipped ×−10, random of 10× the norm, a stale
// replay of the first update, a declared norm of 0 with the update ×10⁶, an accuser), with the
// tracker's trim at --trim (default 0.25: two of eight cut from each side). Each run's figure is
// the honest peers' mean validation loss when their mean round reaches --rounds, and its ratio
// to the clean run's; a run that stops committing is shown with the rounds it reached.
// Prints a table to stderr and, as its last line:
//   sim-attacks: peers=8 rounds=… trim=… clean_loss=… worst_ratio=… worst=… wall_s=…
//
// Options: --rounds R --seed N --trim F --config FILE
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "loco/cli/train_options.hpp"
#include "loco/model/model.hpp"
#include "loco/sim/model_compute.hpp"
#include "loco/sim/swarm.hpp"

namespace {

using loco::sim::Behaviour;

constexpr std::size_t kPeers = 8;

struct Options {
  std::uint64_t rounds = 20;
  std::uint64_t seed = 1;
  float trim = 0.25f;
  bool check_owners = true;
  std::filesystem::path config = LOCO_SOURCE_DIR "/configs/sim-model.toml";
};

struct Outcome {
  double loss = 0;     // the honest peers' mean validation loss
  double round = 0;    // the honest peers' mean round when it stopped
  bool finite = true;  // every honest peer's θ finite
};

Outcome run(const Options& o, const std::map<std::size_t, Behaviour>& liars) {
  loco::train::TrainConfig model = loco::cli::load_train_config(o.config);
  model.train.steps = o.rounds * model.strategy.diloco_h;
  loco::model::set_compute_threads(model.train.threads);
  loco::sim::SwarmConfig c;
  c.seed = o.seed;
  c.peers = kPeers;
  c.model = std::make_shared<loco::sim::ModelCompute>(model, static_cast<std::uint32_t>(kPeers));
  c.codec = model.strategy.codec_spec();
  c.all_reduce = loco::proto::AllReduceAlgorithm::direct;
  c.links.latency_min = std::chrono::milliseconds(20);
  c.links.latency_max = std::chrono::milliseconds(60);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.tracker.trim = o.trim;
  c.tracker.check_owners = o.check_owners;
  c.behaviours = liars;
  c.mean_tolerance = -1;  // the ledger's mean check costs a pass over every update
  loco::sim::Swarm swarm(c);
  swarm.start();
  const auto honest_mean_round = [&] {
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < swarm.peer_count(); ++i)
      if (swarm.peer_up(i) && !liars.contains(i)) {
        sum += static_cast<double>(swarm.peer(i).state().round);
        ++n;
      }
    return n == 0 ? 0.0 : sum / static_cast<double>(n);
  };
  // A round takes H steps of 100 ms and an exchange: give it four times that before giving up.
  const auto step = std::chrono::seconds(1);
  const auto budget = std::chrono::seconds(static_cast<long>(8 * o.rounds)) * 2;
  for (auto spent = std::chrono::seconds(0);
       honest_mean_round() < static_cast<double>(o.rounds) && spent < budget; spent += step)
    swarm.run_for(step);
  Outcome out{.loss = 0, .round = honest_mean_round(), .finite = true};
  std::size_t n = 0;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    if (!swarm.peer_up(i) || liars.contains(i)) continue;
    const auto& theta = swarm.peer(i).state().theta;
    for (const float x : theta) out.finite = out.finite && std::isfinite(x);
    out.loss += swarm.compute().loss(theta);
    ++n;
  }
  out.loss /= static_cast<double>(n);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench-sim-attacks: members that lie, in the simulator"};
  app.add_option("--rounds", o.rounds, "Rounds each run trains")->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "The simulation's seed");
  app.add_option("--trim", o.trim, "The tracker's trim")->check(CLI::Range(0.0, 0.49));
  app.add_option("--check-owners", o.check_owners,
                 "Whether each segment's mean is checked (owner_check.hpp)");
  app.add_option("--config", o.config, "The loco-train config of the model")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  const auto started = std::chrono::steady_clock::now();
  const Outcome clean = run(o, {});
  std::fprintf(stderr, "%-16s %6s %10s %8s %7s\n", "attack", "liars", "val loss", "ratio", "round");
  std::fprintf(stderr, "%-16s %6d %10.4f %8.4f %7.1f\n", "none", 0, clean.loss, 1.0, clean.round);
  double worst_ratio = 1;
  std::string worst = "none";
  for (const Behaviour b :
       {Behaviour::scaled, Behaviour::sign_flipped, Behaviour::random, Behaviour::stale,
        Behaviour::zero_then_huge, Behaviour::accuser, Behaviour::wrong_mean}) {
    for (const std::size_t liars : {std::size_t{1}, std::size_t{2}}) {
      std::map<std::size_t, Behaviour> who = {{3, b}};
      if (liars == 2) who[6] = b;
      const Outcome attacked = run(o, who);
      const double ratio = attacked.finite ? attacked.loss / clean.loss : INFINITY;
      std::fprintf(stderr, "%-16s %6zu %10.4f %8.4f %7.1f%s\n",
                   std::string(loco::sim::name(b)).c_str(), liars, attacked.loss, ratio,
                   attacked.round, attacked.finite ? "" : "  (not finite)");
      const bool stalled = attacked.round < static_cast<double>(o.rounds);
      if (ratio > worst_ratio || stalled) {
        worst_ratio = stalled ? INFINITY : ratio;
        worst = std::string(loco::sim::name(b)) + "x" + std::to_string(liars);
      }
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "sim-attacks: peers=%zu rounds=%llu trim=%.3f check_owners=%d clean_loss=%.4f "
      "worst_ratio=%.4f worst=%s wall_s=%.1f\n",
      kPeers, static_cast<unsigned long long>(o.rounds), static_cast<double>(o.trim),
      o.check_owners ? 1 : 0, clean.loss, worst_ratio, worst.c_str(), wall);
  return 0;
}
