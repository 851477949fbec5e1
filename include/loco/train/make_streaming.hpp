#pragma once
// Streaming DiLoCo from loco-train's options: the config, the lines it adds to the checkpoint
// identity and the run settings, and the strategy. Kept apart from the other strategies'
// construction so that each factory stays one line per strategy.

#include <memory>
#include <string>
#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/streaming_diloco.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config) for a bad layout, eager mode or codec (validate() checks the numbers).
StreamingConfig streaming_config(const StrategySection& s);
// "key=value\n" lines: what fixes the fragment schedule, so a resume under another is refused.
std::string streaming_identity(const StrategySection& s);
// The settings every peer of a streaming run must agree on.
void add_streaming_settings(const StrategySection& s, std::vector<proto::Setting>& settings);

std::unique_ptr<Strategy> make_streaming(const TrainConfig& config, InnerLoop& loop,
                                         AsyncOuterGroup& group);

}  // namespace loco::train
