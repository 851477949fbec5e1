#pragma once
// What the tracker of a run whose DiLoCo rounds are bounded by time (strategy.round-seconds,
// docs/STRATEGIES.md) applies, from the run's config: loco-tracker and the simulator's tracker
// take it from here.

#include "loco/proto/tracker_config.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// With rounds bounded by time (strategy.round-seconds > 0 or strategy.tracker-paced): the groups
// weigh updates by tokens (a step's tokens are train.batch × model.context) and wait
// proto::kStragglerShare × round-seconds for stragglers; tracker-paced, the tracker sets each
// phase to diloco-h × the median member's step time (round-seconds, if > 0, is the first phase)
// and waits kStragglerShare of that. Otherwise `tracker` is left as it is.
void apply_timed_rounds(const TrainConfig& config, proto::TrackerCoreConfig& tracker);

}  // namespace loco::train
