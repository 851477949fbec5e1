#include "loco/train/swarm_strategy.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco::train {

void check_swarm_strategy(const TrainConfig& config, const std::string& source) {
  const StrategySection& s = config.strategy;
  if (s.kind != "diloco" && s.kind != "ddp" && s.kind != "streaming" && s.kind != "demo")
    throw Error(ErrorCategory::config,
                fmt::format("run config {}: a swarm trains with [strategy] kind = \"diloco\", "
                            "\"ddp\", \"streaming\" or \"demo\", not \"{}\"",
                            source, s.kind));
  // The tracker runs one round at a time; eager rounds travel a whole H, so with P fragments P
  // of them would be in flight at once (swarm/swarm_async_group.hpp).
  if (s.kind == "streaming" && s.eager != "none" && s.fragments != 1)
    throw Error(ErrorCategory::config,
                fmt::format("run config {}: over a swarm, strategy.eager = \"{}\" needs "
                            "strategy.fragments = 1 (not {}): its rounds travel a whole H, and "
                            "the tracker runs one round at a time",
                            source, s.eager, s.fragments));
}

void apply_swarm_defaults(TrainConfig& config) {
  StrategySection& s = config.strategy;
  if (!s.tracker_paced)
    s.tracker_paced = s.kind == "diloco" && s.gossip_group == 0 && s.round_seconds == 0;
}

std::string swarm_codec(const TrainConfig& config) {
  return config.strategy.kind == "streaming" ? config.strategy.fragment_codec
                                             : config.strategy.codec_spec();
}

}  // namespace loco::train
