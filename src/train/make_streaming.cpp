#include "loco/train/make_streaming.hpp"

#include <fmt/format.h>

#include "loco/compress/codec.hpp"

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

std::unique_ptr<Strategy> make_streaming(const TrainConfig& config, InnerLoop& loop,
                                         AsyncOuterGroup& group) {
  return std::make_unique<StreamingDiLoCo>(streaming_config(config.strategy), loop.layout(), group);
}

}  // namespace loco::train
