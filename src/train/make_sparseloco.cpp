#include "loco/train/make_sparseloco.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco::train {

SparseLoCoConfig sparseloco_config(const StrategySection& s) {
  return SparseLoCoConfig{.inner_steps = s.diloco_h,
                          .beta = s.sparseloco_beta,
                          .chunk = s.sparseloco_chunk,
                          .topk = s.sparseloco_topk,
                          .bits = s.sparseloco_bits,
                          .outer_lr = s.sparseloco_outer_lr,
                          .clip = s.sparseloco_clip,
                          .zstd = s.sparseloco_zstd};
}

void validate_sparseloco(const TrainConfig& config) {
  if (!config.strategy.codec.empty())
    throw Error(ErrorCategory::config,
                "strategy.codec does not apply to sparseloco: its messages are set by "
                "strategy.sparseloco-chunk, sparseloco-topk and sparseloco-bits");
  sparseloco_config(config.strategy).validate();
}

std::string sparseloco_codec_spec(const StrategySection& s) {
  return sparseloco_config(s).codec_spec();
}

std::string describe_sparseloco(const StrategySection& s) {
  return fmt::format("{} H={} beta={} outer-lr={} clip={} codec={}", s.kind, s.diloco_h,
                     s.sparseloco_beta, s.sparseloco_outer_lr, s.sparseloco_clip, s.codec_spec());
}

std::string sparseloco_identity(const StrategySection& s) {
  return fmt::format(
      "strategy.diloco-h={}\nstrategy.sparseloco-chunk={}\nstrategy.sparseloco-topk={}\n"
      "strategy.sparseloco-bits={}\nstrategy.sparseloco-beta={}\n",
      s.diloco_h, s.sparseloco_chunk, s.sparseloco_topk, s.sparseloco_bits, s.sparseloco_beta);
}

void add_sparseloco_settings(const TrainConfig& config, std::vector<proto::Setting>& settings) {
  const StrategySection& s = config.strategy;
  settings.push_back({"strategy.diloco-h", std::to_string(s.diloco_h)});
  settings.push_back({"strategy.sparseloco-chunk", std::to_string(s.sparseloco_chunk)});
  settings.push_back({"strategy.sparseloco-topk", std::to_string(s.sparseloco_topk)});
  settings.push_back({"strategy.sparseloco-bits", std::to_string(s.sparseloco_bits)});
  settings.push_back({"strategy.sparseloco-beta", fmt::format("{}", s.sparseloco_beta)});
  settings.push_back({"strategy.sparseloco-outer-lr", fmt::format("{}", s.sparseloco_outer_lr)});
  settings.push_back({"strategy.sparseloco-clip", fmt::format("{}", s.sparseloco_clip)});
  settings.push_back({"strategy.sparseloco-zstd", std::to_string(s.sparseloco_zstd)});
}

std::uint64_t sparseloco_final_round(const TrainConfig& config) {
  return config.train.steps / config.strategy.diloco_h;
}

std::unique_ptr<Strategy> make_sparseloco(const TrainConfig& config, InnerLoop& loop,
                                          GatherGroup& group) {
  return std::make_unique<SparseLoCo>(sparseloco_config(config.strategy), loop.layout(), group);
}

}  // namespace loco::train
