#include "loco/train/make_strategy.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/train/strategy_kinds.hpp"

namespace loco::train {
namespace {

[[noreturn]] void missing(const StrategyRow& row, const char* group) {
  throw Error(ErrorCategory::config,
              fmt::format("strategy.kind = \"{}\" needs {} (loco-train's local group or "
                          "loco-peer's swarm)",
                          row.name, group));
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(const TrainConfig& config, InnerLoop& loop,
                                        OuterGroup& group, AsyncOuterGroup* async_group,
                                        GatherGroup* gather_group,
                                        OverlappedGroup* overlapped_group,
                                        std::function<TimePoint()> clock,
                                        OverlappedGather* overlapped_gather) {
  const StrategyRow& row = strategy_row(config.strategy.kind);
  if (row.group == RoundGroup::asynchronous && async_group == nullptr)
    missing(row, "an asynchronous group");
  if (row.group == RoundGroup::all_gather && gather_group == nullptr)
    missing(row, "an all-gather group");
  return row.make(config, loop,
                  StrategyGroups{.group = group,
                                 .async = async_group,
                                 .gather = gather_group,
                                 .overlapped = overlapped_group,
                                 .clock = std::move(clock),
                                 .overlapped_gather = overlapped_gather});
}

std::string describe_strategy(const TrainConfig& config) {
  return strategy_row(config.strategy.kind).describe(config.strategy);
}

}  // namespace loco::train
