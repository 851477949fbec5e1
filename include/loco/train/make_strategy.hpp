#pragma once
// The one place a strategy is built from the run's config (loco-train with a local group,
// loco-peer with the swarm): [strategy] kind = none | diloco | ddp.

#include <memory>
#include <string>

#include "loco/train/strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// The strategy of config.strategy.kind over `group` (which outlives it).
std::unique_ptr<Strategy> make_strategy(const TrainConfig& config,
                                        const std::shared_ptr<const ArenaLayout>& layout,
                                        OuterGroup& group);

// One line for logs and benchmark output, e.g. "diloco H=20 codec=int8:block=256".
std::string describe_strategy(const TrainConfig& config);

}  // namespace loco::train
