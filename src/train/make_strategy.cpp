#include "loco/train/make_strategy.hpp"

#include <fmt/format.h>

#include "loco/train/ddp.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/no_strategy.hpp"

namespace loco::train {

std::unique_ptr<Strategy> make_strategy(const TrainConfig& config,
                                        const std::shared_ptr<const ArenaLayout>& layout,
                                        OuterGroup& group) {
  const StrategySection& s = config.strategy;
  if (s.kind == "diloco")
    return std::make_unique<DiLoCo>(DiLoCoConfig{.inner_steps = s.diloco_h, .outer = s.outer},
                                    layout, group);
  if (s.kind == "ddp") return std::make_unique<DataParallel>(layout, config.adamw, group);
  return std::make_unique<NoStrategy>();
}

std::string describe_strategy(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  if (s.kind == "diloco") return fmt::format("diloco H={} codec={}", s.diloco_h, s.codec_spec());
  if (s.kind == "ddp") return fmt::format("ddp codec={}", s.codec_spec());
  return s.kind;
}

}  // namespace loco::train
