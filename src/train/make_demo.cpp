#include "loco/train/make_demo.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco::train {

DemoConfig demo_config(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  return DemoConfig{.chunk = s.demo_chunk,
                    .topk = s.demo_topk,
                    .beta = s.demo_beta,
                    .values = s.demo_values,
                    .late = s.demo_late,
                    .weight_decay = config.adamw.weight_decay};
}

void validate_demo(const TrainConfig& config) {
  if (!config.strategy.codec.empty())
    throw Error(ErrorCategory::config,
                "strategy.codec does not apply to demo: its messages are set by "
                "strategy.demo-chunk, demo-topk and demo-values");
  demo_config(config).validate();
}

std::string demo_codec_spec(const StrategySection& s) {
  return DemoConfig{.chunk = s.demo_chunk, .topk = s.demo_topk, .values = s.demo_values}
      .codec_spec();
}

std::string describe_demo(const StrategySection& s) {
  return fmt::format("{} beta={} late={} codec={}", s.kind, s.demo_beta, s.demo_late,
                     s.codec_spec());
}

std::string demo_identity(const StrategySection& s) {
  return fmt::format(
      "strategy.demo-chunk={}\nstrategy.demo-topk={}\nstrategy.demo-beta={}\n"
      "strategy.demo-values={}\nstrategy.demo-late={}\n",
      s.demo_chunk, s.demo_topk, s.demo_beta, s.demo_values, s.demo_late);
}

void add_demo_settings(const TrainConfig& config, std::vector<proto::Setting>& settings) {
  const StrategySection& s = config.strategy;
  settings.push_back({"strategy.demo-chunk", std::to_string(s.demo_chunk)});
  settings.push_back({"strategy.demo-topk", std::to_string(s.demo_topk)});
  settings.push_back({"strategy.demo-beta", fmt::format("{}", s.demo_beta)});
  settings.push_back({"strategy.demo-values", s.demo_values});
  settings.push_back({"strategy.demo-late", s.demo_late ? "true" : "false"});
  settings.push_back({"optim.weight-decay", fmt::format("{}", config.adamw.weight_decay)});
}

std::unique_ptr<Strategy> make_demo(const TrainConfig& config, InnerLoop& loop, GatherGroup& group,
                                    OverlappedGather* overlapped) {
  return std::make_unique<DeMo>(demo_config(config), loop.layout(), group, overlapped);
}

}  // namespace loco::train
