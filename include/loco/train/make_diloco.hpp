#pragma once
// DiLoCo from loco-train's options (as make_streaming.hpp is for Streaming DiLoCo): the checks of
// its options, its run settings, its log line, its final round and the strategy; its row in
// strategy_kinds.cpp points here.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config) for H < 1 or bad outer-optimizer options.
void validate_diloco(const TrainConfig& config);
// The settings every peer of a DiLoCo run must agree on, after strategy.kind.
void add_diloco_settings(const TrainConfig& config, std::vector<proto::Setting>& settings);
// E.g. "diloco H=20 codec=int8:block=256", or its rounds bounded by time.
std::string describe_diloco(const StrategySection& s);
// ⌊steps / H⌋ (the steps after the last round are local); 0 in gossip mode, which commits nothing.
std::uint64_t diloco_final_round(const TrainConfig& config);

// Over `groups.group`; its rounds overlap the next inner phase with `groups.overlapped` (the
// swarm's), except in gossip mode.
std::unique_ptr<Strategy> make_diloco(const TrainConfig& config, InnerLoop& loop,
                                      const StrategyGroups& groups);

}  // namespace loco::train
