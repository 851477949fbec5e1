// Members that lie, against the run's liveness (docs/SECURITY.md, "Liveness"): rounds committed per
// virtual hour with f of n members lying, each kind in turn, against the clean run of the same n.
// The peers train the simulator's noisy quadratic (sim/noisy_quadratic.hpp: cheap, so that n = 32
// runs an hour in seconds) with DiLoCo over the direct exchange with checked owners, int8, the
// tracker's defaults otherwise (trim 0.25, accusation bench 10). The kinds (sim/behaviour.hpp):
//   disputer  signs a wrong result for every segment it checks (a dispute every attempt)
//   wrong-mean  returns its own segment's mean negated, signed (a dispute with its checker)
//   accuser   names a member of its group as failed every attempt
//   poisoner  sends its update × 1000 under an honest norm (scaled)
//   silent    joins and stays, never says ready
// Each run's figures: the rounds the tracker committed in the virtual time and their ratio to the
// clean run's, and the honest peers' mean loss at the newest round both runs reached against the
// clean run's there (the goal: ≥ 0.8× the rounds, loss within 2%).
// Prints a table to stderr and, as its last line:
//   sim-liveness: minutes=… worst_rounds_ratio=… worst=… worst_loss_ratio=… worst_loss=… wall_s=…
//
// Options: --minutes M (virtual time of each run) --seed N --peers LIST (e.g. 8,32)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "loco/sim/swarm.hpp"

namespace {

using loco::sim::Behaviour;

struct Options {
  std::uint64_t minutes = 60;
  std::uint64_t seed = 1;
  std::vector<std::size_t> peers = {8, 32};
};

struct Outcome {
  std::uint64_t rounds = 0;  // committed by the tracker
  // The honest peers' mean loss when the last of them reached each round (rounds past the first).
  std::map<std::uint64_t, double> loss_at;
};

// f liars spread over n members: every (n / f)-th index from 1.
std::map<std::size_t, Behaviour> liars(std::size_t n, std::size_t f, Behaviour b) {
  std::map<std::size_t, Behaviour> who;
  for (std::size_t i = 0; i < f; ++i) who[1 + i * (n / f)] = b;
  return who;
}

loco::sim::SwarmConfig swarm_config(const Options& o, std::size_t n,
                                    const std::map<std::size_t, Behaviour>& who) {
  loco::sim::SwarmConfig c;
  c.seed = o.seed;
  c.peers = n;
  c.compute.dim = 4096;
  c.compute.inner_steps = 30;
  // Short inner steps and little gradient noise, so that the early rounds still descend; by the
  // end of an hour the run sits on the noise floor, which the number of members averaged sets
  // (a liar left out of the mean raises it): there the loss ratio counts members, not lies
  // (docs/SECURITY.md, "Rounds per virtual hour").
  c.compute.inner_lr = 0.002f;
  c.compute.noise = 0.05f;
  c.compute.seed = o.seed;
  c.step_time = std::chrono::seconds(1);  // a 30 s inner phase
  c.codec = "int8:block=256";
  c.all_reduce = loco::proto::AllReduceAlgorithm::direct;
  c.links.latency_min = std::chrono::milliseconds(20);
  c.links.latency_max = std::chrono::milliseconds(80);
  c.links.bandwidth_min = 20'000'000;
  c.links.bandwidth_max = 100'000'000;
  c.behaviours = who;
  c.mean_tolerance = -1;  // a liar's contribution is not the ledger's to check here
  return c;
}

// The loss falls round by round whoever lies, so a run that commits fewer rounds ends with a
// higher loss for that alone: the harm of what the liars sent is the loss at equal rounds.
Outcome run(const Options& o, std::size_t n, const std::map<std::size_t, Behaviour>& who) {
  loco::sim::Swarm swarm(swarm_config(o, n, who));
  swarm.start();
  Outcome out;
  const auto step = std::chrono::seconds(5);
  for (auto spent = std::chrono::seconds(0); spent < std::chrono::minutes(o.minutes);
       spent += step) {
    swarm.run_for(step);
    std::uint64_t last = UINT64_MAX;
    double loss = 0;
    std::size_t honest = 0;
    for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
      if (!swarm.peer_up(i) || who.contains(i)) continue;
      last = std::min(last, swarm.peer(i).state().round);
      loss += swarm.compute().loss(swarm.peer(i).state().theta);
      ++honest;
    }
    if (honest > 0 && last > 0 && !out.loss_at.contains(last))
      out.loss_at[last] = loss / static_cast<double>(honest);
  }
  out.rounds = swarm.rounds_committed();
  return out;
}

struct Worst {
  double rounds_ratio = 1, loss_ratio = 1;
  std::string rounds_of = "none", loss_of = "none";
};

// The newest round both runs reached, and each run's loss there (NaN when they share none).
struct AtEqualRounds {
  std::uint64_t round = 0;
  double clean = NAN, attacked = NAN;
};
AtEqualRounds compare(const Outcome& clean, const Outcome& attacked) {
  AtEqualRounds out;
  for (auto it = attacked.loss_at.rbegin(); it != attacked.loss_at.rend(); ++it)
    if (clean.loss_at.contains(it->first))
      return {it->first, clean.loss_at.at(it->first), it->second};
  return out;
}

void measure(const Options& o, std::size_t n, Worst& worst) {
  const Outcome clean = run(o, n, {});
  std::fprintf(stderr, "%5s %-11s %5s %8s %8s %8s %10s %10s %8s\n", "n", "liars", "f", "rounds",
               "ratio", "at round", "loss", "clean", "ratio");
  std::fprintf(stderr, "%5zu %-11s %5d %8llu %8.3f\n", n, "none", 0,
               static_cast<unsigned long long>(clean.rounds), 1.0);
  std::vector<std::size_t> counts = {1, n / 8, n / 4};
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (const Behaviour b : {Behaviour::disputer, Behaviour::wrong_mean, Behaviour::accuser,
                            Behaviour::scaled, Behaviour::silent}) {
    for (const std::size_t f : counts) {
      const Outcome attacked = run(o, n, liars(n, f, b));
      const double rounds_ratio = static_cast<double>(attacked.rounds) /
                                  static_cast<double>(std::max<std::uint64_t>(clean.rounds, 1));
      const AtEqualRounds at = compare(clean, attacked);
      const double loss_ratio = at.attacked / at.clean;
      const std::string label =
          b == Behaviour::scaled ? std::string("poisoner") : std::string(loco::sim::name(b));
      std::fprintf(stderr, "%5zu %-11s %5zu %8llu %8.3f %8llu %10.3g %10.3g %8.4f\n", n,
                   label.c_str(), f, static_cast<unsigned long long>(attacked.rounds), rounds_ratio,
                   static_cast<unsigned long long>(at.round), at.attacked, at.clean, loss_ratio);
      const std::string which = label + "x" + std::to_string(f) + "/" + std::to_string(n);
      if (rounds_ratio < worst.rounds_ratio) {
        worst.rounds_ratio = rounds_ratio;
        worst.rounds_of = which;
      }
      if (!(loss_ratio <= worst.loss_ratio)) {  // NaN too: no round in common is the worst
        worst.loss_ratio = loss_ratio;
        worst.loss_of = which;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"bench-sim-liveness: members that lie, against the rounds a run commits"};
  app.add_option("--minutes", o.minutes, "Virtual minutes each run lasts")
      ->check(CLI::Range(1, 24 * 60));
  app.add_option("--seed", o.seed, "The simulation's seed");
  app.add_option("--peers", o.peers, "Run sizes (each at least 4)")
      ->delimiter(',')
      ->check(CLI::Range(4, 256));
  CLI11_PARSE(app, argc, argv);
  const auto started = std::chrono::steady_clock::now();
  Worst worst;
  for (const std::size_t n : o.peers) measure(o, n, worst);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "sim-liveness: minutes=%llu worst_rounds_ratio=%.3f worst=%s worst_loss_ratio=%.4f "
      "worst_loss=%s wall_s=%.1f\n",
      static_cast<unsigned long long>(o.minutes), worst.rounds_ratio, worst.rounds_of.c_str(),
      worst.loss_ratio, worst.loss_of.c_str(), wall);
  return 0;
}
