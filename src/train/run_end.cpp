#include "loco/train/run_end.hpp"

#include <algorithm>

#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

std::uint64_t final_round(const TrainConfig& config) {
  return strategy_row(config.strategy.kind).final_round(config);
}

bool more_to_train(const TrainConfig& config, std::uint64_t steps, std::uint64_t round,
                   std::uint64_t begun, std::uint64_t final_round) {
  if (config.strategy.timed_rounds()) {
    // Gossip has no tracker rounds, so no run's final round: each peer applies the run's nominal
    // number of rounds of its own, so that every peer, slow or fast, ends at the same time.
    const std::uint64_t last = final_round != 0 ? final_round : train::final_round(config);
    return round < (last != 0 ? last : config.train.steps / config.strategy.diloco_h);
  }
  // A round given up keeps its number (Streaming sends the same fragment again at its next slot,
  // DiLoCo's Δ spans both phases), so a member's rounds can fall behind its steps: it trains on to
  // the run's final round rather than leave a round or more early (issue 49).
  // The round begun at the last step lands in finish() (DiLoCo's overlapped round, DeMo's delayed
  // apply); Streaming's is still on the wire when the peers stop (final_round).
  const std::uint64_t held =
      strategy_row(config.strategy.kind).begun_round_lands ? std::max(round, begun) : round;
  return steps < config.train.steps || (final_round != 0 && held < final_round);
}

}  // namespace loco::train
