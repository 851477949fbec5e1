// Members that lie, measured in the simulator with a real model (docs/SECURITY.md, "Measured"):
// 8 simulated peers train configs/sim-model.toml's small GPT with DiLoCo (H = 20, int8) over the
// direct exchange for --rounds rounds, once clean and once per attack with 1 and then 2 of the 8
// lying (sim/behaviour.hpp: scaled ×1000, sign-flipped ×−10, random of 10× the norm, a stale
// replay of the first update, a declared norm of 0 with the update ×10⁶, an accuser), with the
// tracker's trim at --trim (default 0.25: two of eight cut from each side). Each run's figure is
// the honest peers' mean validation loss when their mean round reaches --rounds, and its ratio
// to the clean run's; a run that stops committing is shown with the rounds it reached.
// Then the same 8 peers as real SparseLoCo processes (sim/strategy_process.hpp; chunks of 64
// keeping 8 in 2 bits, as bench/run.sh strategies) for --sparseloco-rounds rounds (0: none), the
// liars lying in their messages (sim/lying_gather.hpp), the clip at the median norm (the default),
// and once scaled with the clip off: there the figure is the honest peers' loss once they finished.
// Prints the tables to stderr and, as its last line:
//   sim-attacks: peers=8 rounds=… trim=… clean_loss=… worst_ratio=… worst=…
//     sparseloco_clean_loss=… sparseloco_worst_ratio=… sparseloco_worst=…
//     sparseloco_unclipped_ratio=… wall_s=…
//
// Options: --rounds R --seed N --trim F --config FILE --sparseloco-rounds R
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
#include "loco/sim/strategy_process.hpp"
#include "loco/sim/swarm.hpp"

namespace {

using loco::sim::Behaviour;

constexpr std::size_t kPeers = 8;
// SparseLoCo's clip: the run config's default.
const float kSparseClip = loco::train::StrategySection{}.sparseloco_clip;

struct Options {
  std::uint64_t rounds = 20;
  std::uint64_t sparseloco_rounds = 20;
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

// Both kinds of run: 8 peers over the direct exchange, 20 to 60 ms apart at 100 Mbit/s.
loco::sim::SwarmConfig swarm_config(const Options& o,
                                    const std::map<std::size_t, Behaviour>& liars) {
  loco::sim::SwarmConfig c;
  c.seed = o.seed;
  c.peers = kPeers;
  c.all_reduce = loco::proto::AllReduceAlgorithm::direct;
  c.links.latency_min = std::chrono::milliseconds(20);
  c.links.latency_max = std::chrono::milliseconds(60);
  c.links.bandwidth_min = c.links.bandwidth_max = 100'000'000;
  c.tracker.trim = o.trim;
  c.tracker.check_owners = o.check_owners;
  c.behaviours = liars;
  c.mean_tolerance = -1;  // the ledger's mean check costs a pass over every update
  return c;
}

Outcome run(const Options& o, const std::map<std::size_t, Behaviour>& liars) {
  loco::train::TrainConfig model = loco::cli::load_train_config(o.config);
  model.train.steps = o.rounds * model.strategy.diloco_h;
  loco::model::set_compute_threads(model.train.threads);
  loco::sim::SwarmConfig c = swarm_config(o, liars);
  c.model = std::make_shared<loco::sim::ModelCompute>(model, static_cast<std::uint32_t>(kPeers));
  c.codec = model.strategy.codec_spec();
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

// SparseLoCo strategy peers (liars lying in their messages) with the clip at `clip`.
Outcome run_sparseloco(const Options& o, const std::map<std::size_t, Behaviour>& liars,
                       float clip) {
  loco::train::TrainConfig model = loco::cli::load_train_config(o.config);
  model.strategy.kind = "sparseloco";
  model.strategy.codec.clear();  // its messages are the sparseloco options'
  model.strategy.sparseloco_chunk = 64;
  model.strategy.sparseloco_topk = 8;
  model.strategy.sparseloco_bits = 2;
  model.strategy.sparseloco_outer_lr = 1.0f;
  model.strategy.sparseloco_clip = clip;
  model.train.steps = o.sparseloco_rounds * model.strategy.diloco_h;
  model.validate();
  auto run = std::make_shared<loco::sim::StrategyRun>(model);
  run->evaluate = true;
  loco::sim::SwarmConfig c = swarm_config(o, liars);
  c.strategy = run;
  loco::sim::Swarm swarm(c);
  swarm.start();
  const auto finished = [&] {
    for (std::size_t i = 0; i < swarm.peer_count(); ++i)
      if (!liars.contains(i) && swarm.peer_up(i) && !swarm.peer(i).process()->finished())
        return false;
    return true;
  };
  const auto budget = std::chrono::seconds(static_cast<long>(16 * o.sparseloco_rounds));
  for (auto spent = std::chrono::seconds(0); !finished() && spent < budget;
       spent += std::chrono::seconds(1))
    swarm.run_for(std::chrono::seconds(1));
  Outcome out{.loss = 0, .round = 0, .finite = true};
  std::size_t n = 0;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    if (!swarm.peer_up(i) || liars.contains(i)) continue;
    const double loss = swarm.peer(i).process()->final_loss();
    out.finite = out.finite && std::isfinite(loss);
    out.loss += loss;
    out.round += static_cast<double>(swarm.peer(i).held_round());
    ++n;
  }
  out.loss /= static_cast<double>(n);
  out.round /= static_cast<double>(n);
  return out;
}

// The worst attack of a table: its ratio to the clean run (infinite: stalled) and its name.
struct Worst {
  double ratio = 1;
  std::string attack = "none";
};

// One table row; `worst` takes it if it is worse.
void row(const std::string& attack, std::size_t liars, const Outcome& clean,
         const Outcome& attacked, std::uint64_t rounds, Worst& worst) {
  const double ratio = attacked.finite ? attacked.loss / clean.loss : INFINITY;
  std::fprintf(stderr, "%-16s %6zu %10.4f %8.4f %7.1f%s\n", attack.c_str(), liars, attacked.loss,
               ratio, attacked.round, attacked.finite ? "" : "  (not finite)");
  const bool stalled = attacked.round < static_cast<double>(rounds);
  if (ratio > worst.ratio || stalled) {
    worst.ratio = stalled ? INFINITY : ratio;
    worst.attack = attack + "x" + std::to_string(liars);
  }
}

// Each attack with 1 and then 2 liars (peers 3 and 6) against `clean`.
template <typename Run>
Worst table(const char* title, const Outcome& clean, std::uint64_t rounds,
            std::initializer_list<Behaviour> attacks, Run run_with) {
  std::fprintf(stderr, "%s\n%-16s %6s %10s %8s %7s\n", title, "attack", "liars", "val loss",
               "ratio", "round");
  std::fprintf(stderr, "%-16s %6d %10.4f %8.4f %7.1f\n", "none", 0, clean.loss, 1.0, clean.round);
  Worst worst;
  for (const Behaviour b : attacks)
    for (const std::size_t liars : {std::size_t{1}, std::size_t{2}}) {
      std::map<std::size_t, Behaviour> who = {{3, b}};
      if (liars == 2) who[6] = b;
      row(std::string(loco::sim::name(b)), liars, clean, run_with(who), rounds, worst);
    }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench-sim-attacks: members that lie, in the simulator"};
  app.add_option("--rounds", o.rounds, "Rounds each run trains")->check(CLI::Range(1, 100000));
  app.add_option("--sparseloco-rounds", o.sparseloco_rounds,
                 "Rounds each SparseLoCo run trains (0: none)")
      ->check(CLI::Range(0, 100000));
  app.add_option("--seed", o.seed, "The simulation's seed");
  app.add_option("--trim", o.trim, "The tracker's trim")->check(CLI::Range(0.0, 0.49));
  app.add_option("--check-owners", o.check_owners,
                 "Whether each segment's mean is checked (owner_check.hpp)");
  app.add_option("--config", o.config, "The loco-train config of the model")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  const auto started = std::chrono::steady_clock::now();
  const Outcome clean = run(o, {});
  const Worst worst =
      table("DiLoCo", clean, o.rounds,
            {Behaviour::scaled, Behaviour::sign_flipped, Behaviour::random, Behaviour::stale,
             Behaviour::zero_then_huge, Behaviour::accuser, Behaviour::wrong_mean},
            [&](const auto& who) { return run(o, who); });
  Outcome sparse_clean{.loss = NAN, .round = 0, .finite = false};
  Worst sparse_worst{.ratio = NAN, .attack = "none"};
  double unclipped_ratio = NAN;
  if (o.sparseloco_rounds > 0) {
    sparse_clean = run_sparseloco(o, {}, kSparseClip);
    sparse_worst = table("SparseLoCo, clip 1", sparse_clean, o.sparseloco_rounds,
                         {Behaviour::scaled, Behaviour::sign_flipped, Behaviour::random,
                          Behaviour::stale, Behaviour::zero_then_huge},
                         [&](const auto& who) { return run_sparseloco(o, who, kSparseClip); });
    const Outcome unclipped = run_sparseloco(o, {{3, Behaviour::scaled}}, 0.0f);
    Worst ignored;
    std::fprintf(stderr, "SparseLoCo, clip off\n");
    row("scaled", 1, sparse_clean, unclipped, o.sparseloco_rounds, ignored);
    unclipped_ratio = unclipped.finite ? unclipped.loss / sparse_clean.loss : INFINITY;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "sim-attacks: peers=%zu rounds=%llu trim=%.3f check_owners=%d clean_loss=%.4f "
      "worst_ratio=%.4f worst=%s sparseloco_rounds=%llu sparseloco_clean_loss=%.4f "
      "sparseloco_worst_ratio=%.4f sparseloco_worst=%s sparseloco_unclipped_ratio=%.4f "
      "wall_s=%.1f\n",
      kPeers, static_cast<unsigned long long>(o.rounds), static_cast<double>(o.trim),
      o.check_owners ? 1 : 0, clean.loss, worst.ratio, worst.attack.c_str(),
      static_cast<unsigned long long>(o.sparseloco_rounds), sparse_clean.loss, sparse_worst.ratio,
      sparse_worst.attack.c_str(), unclipped_ratio, wall);
  return 0;
}
