#pragma once
// What the tracker of a run whose DiLoCo rounds are bounded by time (strategy.round-seconds,
// docs/STRATEGIES.md) applies, from the run's config: loco-tracker and the simulator's tracker
// take it from here.

#include "loco/proto/tracker_config.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// A member still training this share of a round's time after the first is ready is not waited for.
inline constexpr double kStragglerShare = 0.25;

// With strategy.round-seconds > 0: the groups weigh updates by tokens (a step's tokens are
// train.batch × model.context) and wait kStragglerShare × round-seconds for stragglers; otherwise
// `tracker` is left as it is.
void apply_timed_rounds(const TrainConfig& config, proto::TrackerCoreConfig& tracker);

}  // namespace loco::train
