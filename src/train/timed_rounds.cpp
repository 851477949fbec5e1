#include "loco/train/timed_rounds.hpp"

#include <chrono>

namespace loco::train {

void apply_timed_rounds(const TrainConfig& config, proto::TrackerCoreConfig& tracker) {
  const double seconds = config.strategy.round_seconds;
  if (seconds <= 0) return;
  tracker.token_weighting.step_tokens =
      std::uint64_t{config.train.batch} * std::uint64_t{config.model.gpt.context};
  tracker.straggler_wait = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(kStragglerShare * seconds));
}

}  // namespace loco::train
