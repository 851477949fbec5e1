#include "loco/train/make_diloco.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/run_settings.hpp"

namespace loco::train {

void validate_diloco(const TrainConfig& config) {
  if (config.strategy.diloco_h < 1)
    throw Error(ErrorCategory::config, "strategy.diloco-h must be at least 1");
  config.strategy.outer.validate();
}

void add_diloco_settings(const TrainConfig& config, std::vector<proto::Setting>& settings) {
  const StrategySection& s = config.strategy;
  settings.push_back({"strategy.diloco-h", std::to_string(s.diloco_h)});
  settings.push_back({"strategy.outer-lr", fmt::format("{}", s.outer.lr)});
  settings.push_back({"strategy.outer-momentum", fmt::format("{}", s.outer.momentum)});
  if (s.gossip_group != 0)
    settings.push_back({"strategy.gossip-group", std::to_string(s.gossip_group)});
  if (s.round_seconds > 0)
    settings.push_back({"strategy.round-seconds", fmt::format("{}", s.round_seconds)});
  if (s.paced()) settings.push_back({"strategy.tracker-paced", "true"});
  add_codec_setting(config, settings);
  add_all_reduce_setting(config, settings);
}

std::string describe_diloco(const StrategySection& s) {
  if (s.paced())
    return fmt::format("{} rounds paced by the tracker (H={} steps of the median member) codec={}",
                       s.kind, s.diloco_h, s.codec_spec());
  if (s.round_seconds > 0)
    return fmt::format("{} rounds of {} s (nominal H={}) codec={}", s.kind, s.round_seconds,
                       s.diloco_h, s.codec_spec());
  return fmt::format("{} H={} codec={}", s.kind, s.diloco_h, s.codec_spec());
}

std::uint64_t diloco_final_round(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  return s.gossip_group != 0 ? 0 : config.train.steps / s.diloco_h;
}

std::unique_ptr<Strategy> make_diloco(const TrainConfig& config, InnerLoop& loop,
                                      const StrategyGroups& groups) {
  const StrategySection& s = config.strategy;
  return std::make_unique<DiLoCo>(DiLoCoConfig{.inner_steps = s.diloco_h,
                                               .outer = s.outer,
                                               .round_time = std::chrono::duration_cast<Duration>(
                                                   std::chrono::duration<double>(s.round_seconds)),
                                               .paced = s.paced(),
                                               .clock = groups.clock},
                                  loop.layout(), groups.group,
                                  // A gossip round installs at once: no commit to overlap.
                                  s.gossip_group == 0 ? groups.overlapped : nullptr);
}

}  // namespace loco::train
