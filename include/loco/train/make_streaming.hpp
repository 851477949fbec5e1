#pragma once
// Streaming DiLoCo from loco-train's options: the config, its checks, the lines it adds to the
// checkpoint identity and the run settings, its final round, what a swarm asks of it, its log line
// and the strategy; its row in strategy_kinds.cpp points here.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/streaming_diloco.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config) for a bad layout, eager mode or codec (validate() checks the numbers).
StreamingConfig streaming_config(const StrategySection& s);
// Throws Error(config) naming the first bad option: an external model's fragments are runs of
// whole tensors (layout "balanced"), then what streaming_config and its validate() refuse.
void validate_streaming(const TrainConfig& config);
// "key=value\n" lines: what fixes the fragment schedule, so a resume under another is refused.
std::string streaming_identity(const StrategySection& s);
// The settings every peer of a streaming run must agree on.
void add_streaming_settings(const StrategySection& s, std::vector<proto::Setting>& settings);

// The last round that lands by step train.steps (one sent later would still be on the wire when
// the peers stop).
std::uint64_t streaming_final_round(const TrainConfig& config);
// Throws Error(config), naming `source`, for eager updates with more than one fragment over a
// swarm: their rounds travel a whole H, and the tracker runs one round at a time.
void check_streaming_over_swarm(const StrategySection& s, const std::string& source);
// E.g. "streaming H=20 P=2 tau=0 alpha=0.5 codec=fp4:block=64".
std::string describe_streaming(const StrategySection& s);

std::unique_ptr<Strategy> make_streaming(const TrainConfig& config, InnerLoop& loop,
                                         AsyncOuterGroup& group);

}  // namespace loco::train
