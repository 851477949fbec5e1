#pragma once
// What a run over a swarm asks of its [strategy], checked the same way by loco-peer and by the
// simulator's strategy peers (sim/strategy_process.hpp), and the codec its rounds travel in.

#include <string>

#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config), naming `source` (the config file), when the strategy cannot run over a
// swarm: a kind whose row (strategy_kinds.hpp) is not over_swarm, or what its row's swarm_check
// refuses (Streaming: eager updates with more than one fragment, whose rounds travel a whole H
// while the tracker runs one round at a time).
void check_swarm_strategy(const TrainConfig& config, const std::string& source);

// A swarm's defaults, applied by loco-tracker and loco-peer to the run config they load (the
// simulator's tests apply them where they mean a default run): a DiLoCo run in all-reduce mode
// whose config neither sets strategy.tracker-paced nor bounds rounds by round-seconds is paced by
// the tracker. Volunteers differ in speed: with a round every H steps every round waits for the
// slowest member, and one peer 3x slower holds the others to a third of their compute
// (docs/STRATEGIES.md, "Rounds bounded by time").
void apply_swarm_defaults(TrainConfig& config);

// The codec of a round's contributions (the row's round_codec): Streaming's fragments travel in
// their own codec (4-bit floats by default), every other strategy's in strategy.codec.
std::string swarm_codec(const TrainConfig& config);

}  // namespace loco::train
