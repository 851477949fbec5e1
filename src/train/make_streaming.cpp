#include "loco/train/make_streaming.hpp"

#include <fmt/format.h>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"

namespace loco::train {

StreamingConfig streaming_config(const StrategySection& s) {
  compress::make_codec(s.fragment_codec);  // throws Error(config) naming what is wrong
  return StreamingConfig{.inner_steps = s.diloco_h,
                         .fragments = s.fragments,
                         .tau = s.tau,
                         .alpha = s.alpha,
                         .layout = parse_fragment_layout(s.layout),
                         .eager = parse_eager(s.eager),
                         .outer = s.outer};
}

void validate_streaming(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  if (config.model.external() && s.layout != "balanced")
    throw Error(ErrorCategory::config,
                "strategy.layout = '" + s.layout +
                    "' groups loco's own models' layers by name; an external model's fragments "
                    "are runs of whole tensors balanced by size: strategy.layout = \"balanced\"");
  streaming_config(s).validate();
}

std::string streaming_identity(const StrategySection& s) {
  return fmt::format(
      "strategy.diloco-h={}\nstrategy.fragments={}\nstrategy.tau={}\nstrategy.layout={}\n"
      "strategy.eager={}\n",
      s.diloco_h, s.fragments, s.tau, s.layout, s.eager);
}

void add_streaming_settings(const StrategySection& s, std::vector<proto::Setting>& settings) {
  settings.push_back({"strategy.diloco-h", std::to_string(s.diloco_h)});
  settings.push_back({"strategy.outer-lr", fmt::format("{}", s.outer.lr)});
  settings.push_back({"strategy.outer-momentum", fmt::format("{}", s.outer.momentum)});
  settings.push_back({"strategy.fragments", std::to_string(s.fragments)});
  settings.push_back({"strategy.tau", std::to_string(s.tau)});
  settings.push_back({"strategy.alpha", fmt::format("{}", s.alpha)});
  settings.push_back({"strategy.layout", s.layout});
  settings.push_back({"strategy.eager", s.eager});
  settings.push_back({"strategy.fragment-codec", compress::make_codec(s.fragment_codec)->spec()});
}

std::uint64_t streaming_final_round(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  const std::uint64_t steps = config.train.steps;
  // Landing steps grow with the round: at most P rounds a cycle of H steps land by `steps`.
  const StreamingConfig streaming = streaming_config(s);
  std::uint64_t round = (steps / s.diloco_h + 1) * s.fragments;
  while (round > 0 && landed_step(streaming, round) > steps) --round;
  return round;
}

void check_streaming_over_swarm(const StrategySection& s, const std::string& source) {
  // The tracker runs one round at a time; eager rounds travel a whole H, so with P fragments P
  // of them would be in flight at once (round/swarm_async_group.hpp).
  if (s.eager != "none" && s.fragments != 1)
    throw Error(ErrorCategory::config,
                fmt::format("run config {}: over a swarm, strategy.eager = \"{}\" needs "
                            "strategy.fragments = 1 (not {}): its rounds travel a whole H, and "
                            "the tracker runs one round at a time",
                            source, s.eager, s.fragments));
}

std::string describe_streaming(const StrategySection& s) {
  return fmt::format("{} H={} P={} tau={} alpha={} codec={}", s.kind, s.diloco_h, s.fragments,
                     s.tau, s.alpha, s.fragment_codec);
}

std::unique_ptr<Strategy> make_streaming(const TrainConfig& config, InnerLoop& loop,
                                         AsyncOuterGroup& group) {
  return std::make_unique<StreamingDiLoCo>(streaming_config(config.strategy), loop.layout(), group);
}

}  // namespace loco::train
