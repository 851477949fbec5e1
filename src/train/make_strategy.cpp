#include "loco/train/make_strategy.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/train/ddp.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/make_demo.hpp"
#include "loco/train/make_streaming.hpp"
#include "loco/train/no_strategy.hpp"

namespace loco::train {

std::unique_ptr<Strategy> make_strategy(const TrainConfig& config, InnerLoop& loop,
                                        OuterGroup& group, AsyncOuterGroup* async_group,
                                        GatherGroup* gather_group,
                                        OverlappedGroup* overlapped_group,
                                        std::function<TimePoint()> clock,
                                        OverlappedGather* overlapped_gather) {
  const StrategySection& s = config.strategy;
  if (s.kind == "diloco")
    return std::make_unique<DiLoCo>(
        DiLoCoConfig{.inner_steps = s.diloco_h,
                     .outer = s.outer,
                     .round_time = std::chrono::duration_cast<Duration>(
                         std::chrono::duration<double>(s.round_seconds)),
                     .paced = s.paced(),
                     .clock = std::move(clock)},
        loop.layout(), group,
        // A gossip round installs at once: no commit to overlap.
        s.gossip_group == 0 ? overlapped_group : nullptr);
  if (s.kind == "ddp") return std::make_unique<DataParallel>(loop.layout(), config.adamw, group);
  if (s.kind == "streaming") {
    if (async_group == nullptr)
      throw Error(ErrorCategory::config,
                  "strategy.kind = \"streaming\" needs an asynchronous group (loco-train's "
                  "local group or loco-peer's swarm)");
    return make_streaming(config, loop, *async_group);
  }
  if (s.kind == "demo") {
    if (gather_group == nullptr)
      throw Error(ErrorCategory::config,
                  "strategy.kind = \"demo\" needs an all-gather group (loco-train's local "
                  "group or loco-peer's swarm)");
    return make_demo(config, loop, *gather_group, overlapped_gather);
  }
  return std::make_unique<NoStrategy>();
}

std::string describe_strategy(const TrainConfig& config) {
  const StrategySection& s = config.strategy;
  if (s.kind == "diloco" && s.paced())
    return fmt::format(
        "diloco rounds paced by the tracker (H={} steps of the median member) codec={}", s.diloco_h,
        s.codec_spec());
  if (s.kind == "diloco" && s.round_seconds > 0)
    return fmt::format("diloco rounds of {} s (nominal H={}) codec={}", s.round_seconds, s.diloco_h,
                       s.codec_spec());
  if (s.kind == "diloco") return fmt::format("diloco H={} codec={}", s.diloco_h, s.codec_spec());
  if (s.kind == "ddp") return fmt::format("ddp codec={}", s.codec_spec());
  if (s.kind == "streaming")
    return fmt::format("streaming H={} P={} tau={} alpha={} codec={}", s.diloco_h, s.fragments,
                       s.tau, s.alpha, s.fragment_codec);
  if (s.kind == "demo")
    return fmt::format("demo beta={} late={} codec={}", s.demo_beta, s.demo_late, s.codec_spec());
  return s.kind;
}

}  // namespace loco::train
