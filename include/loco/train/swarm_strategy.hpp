#pragma once
// What a run over a swarm asks of its [strategy], checked the same way by loco-peer and by the
// simulator's strategy peers (sim/strategy_process.hpp), and the codec its rounds travel in.

#include <string>

#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config), naming `source` (the config file), when the strategy cannot run over a
// swarm: a kind other than diloco, ddp, streaming or demo; eager updates with more than one
// fragment (their rounds travel a whole H, and the tracker runs one round at a time).
void check_swarm_strategy(const TrainConfig& config, const std::string& source);

// The codec of a round's contributions: Streaming's fragments travel in their own codec (4-bit
// floats by default), every other strategy's in strategy.codec.
std::string swarm_codec(const TrainConfig& config);

}  // namespace loco::train
