#pragma once
// Shared by the simulator's tests of real strategies (strategy_process.hpp): a small run of each
// strategy and a swarm that trains it.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "loco/cli/train_options.hpp"
#include "loco/sim/strategy_process.hpp"
#include "sim_support.hpp"

namespace loco::sim::test {

// configs/sim-model.toml's GPT, smaller still: one layer, batches of 4.
inline std::shared_ptr<const StrategyRun> tiny_run(const std::string& kind, std::uint64_t steps) {
  train::TrainConfig c = cli::load_train_config(LOCO_SOURCE_DIR "/configs/sim-model.toml");
  c.model.gpt.n_layer = 1;
  c.train.batch = 4;
  c.train.steps = steps;
  c.strategy.kind = kind;
  c.strategy.diloco_h = 10;
  c.strategy.fragments = 2;
  c.strategy.tau = 2;
  if (kind == "eager") {
    c.strategy.kind = "streaming";
    c.strategy.eager = "overlapped";
    c.strategy.fragments = 1;
    c.strategy.tau = 0;
  }
  if (kind == "demo-late") {  // the delayed apply, whose rounds overlap the next step
    c.strategy.kind = "demo";
    c.strategy.demo_late = true;
  }
  if (c.strategy.kind == "demo" || c.strategy.kind == "sparseloco")
    c.strategy.codec
        .clear();  // their own messages (demo_components.hpp, sparseloco_components.hpp)
  c.validate();
  return std::make_shared<StrategyRun>(c);
}

inline SwarmConfig strategy_swarm(std::uint64_t seed, std::size_t peers,
                                  std::shared_ptr<const StrategyRun> run) {
  SwarmConfig c = instant_swarm(seed, peers);
  // The ledger's mean is of the values as sent: int8 blocks are within 1% of their largest
  // value. Streaming's 4-bit floats (powers of two, stochastically rounded) err by as much as a
  // member's share of the mean, so the check could not tell a partial average: skipped.
  c.mean_tolerance = run->config.strategy.kind == "streaming" ? -1 : 1e-2;
  c.strategy = std::move(run);
  return c;
}

// Every peer that finished its steps holds the same state.
inline std::map<Digest, std::size_t> finished_states(const Swarm& swarm) {
  std::map<Digest, std::size_t> votes;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    if (swarm.peer_up(i) && swarm.peer(i).process()->finished()) ++votes[swarm.peer(i).held_hash()];
  return votes;
}

// Every peer did `steps` steps and no invariant broke.
inline std::string failures(const Swarm& swarm, std::uint64_t min_rounds, std::uint64_t steps) {
  std::string out = violations(swarm);
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    if (!swarm.peer_up(i))
      out += "  peer " + std::to_string(i) + " is down\n";
    else if (swarm.peer(i).process()->steps() < steps)
      out += "  peer " + std::to_string(i) + " did not finish its steps: step " +
             std::to_string(swarm.peer(i).process()->steps()) + ", round " +
             std::to_string(swarm.peer(i).held_round()) + "\n";
  if (swarm.rounds_committed() < min_rounds)
    out += "  only " + std::to_string(swarm.rounds_committed()) + " rounds committed\n";
  return out;
}

}  // namespace loco::sim::test
