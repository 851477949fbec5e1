#include "loco/train/run_end.hpp"

#include <algorithm>

#include "loco/train/make_streaming.hpp"

namespace loco::train {

std::uint64_t final_round(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  const std::uint64_t steps = config.train.steps;
  if (s.kind == "diloco") return s.gossip_group != 0 ? 0 : steps / s.diloco_h;
  if (s.kind == "ddp" || s.kind == "demo") return steps;
  if (s.kind != "streaming") return 0;
  // Landing steps grow with the round: at most P rounds a cycle of H steps land by `steps`.
  const StreamingConfig streaming = streaming_config(s);
  std::uint64_t round = (steps / s.diloco_h + 1) * s.fragments;
  while (round > 0 && landed_step(streaming, round) > steps) --round;
  return round;
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
  const std::uint64_t held = config.strategy.kind == "streaming" ? round : std::max(round, begun);
  return steps < config.train.steps || (final_round != 0 && held < final_round);
}

}  // namespace loco::train
