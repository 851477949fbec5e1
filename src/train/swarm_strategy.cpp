#include "loco/train/swarm_strategy.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {

void check_swarm_strategy(const TrainConfig& config, const std::string& source) {
  const StrategySection& s = config.strategy;
  const StrategyRow& row = strategy_row(s.kind);
  if (!row.over_swarm)
    throw Error(ErrorCategory::config,
                fmt::format("run config {}: a swarm trains with [strategy] kind = {}, not \"{}\"",
                            source, strategy_names(&StrategyRow::over_swarm, '"'), s.kind));
  row.swarm_check(s, source);
}

void apply_swarm_defaults(TrainConfig& config) {
  StrategySection& s = config.strategy;
  if (!s.tracker_paced)
    s.tracker_paced =
        strategy_row(s.kind).diloco_round_options && s.gossip_group == 0 && s.round_seconds == 0;
}

std::string swarm_codec(const TrainConfig& config) {
  return strategy_row(config.strategy.kind).round_codec(config.strategy);
}

}  // namespace loco::train
