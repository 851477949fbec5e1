#include "loco/train/timed_rounds.hpp"

#include <chrono>

namespace loco::train {

void apply_timed_rounds(const TrainConfig& config, proto::TrackerCoreConfig& tracker) {
  const StrategySection& s = config.strategy;
  if (!s.timed_rounds()) return;
  tracker.token_weighting.step_tokens =
      std::uint64_t{config.train.batch} * std::uint64_t{config.model.gpt.context};
  const auto seconds = [](double count) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(count));
  };
  tracker.straggler_wait = seconds(proto::kStragglerShare * s.round_seconds);
  if (s.paced())
    tracker.pacing = proto::RoundPacing{.steps = s.diloco_h, .first = seconds(s.round_seconds)};
}

}  // namespace loco::train
