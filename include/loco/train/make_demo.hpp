#pragma once
// DeMo from loco-train's options: its config, the lines it adds to the checkpoint identity and
// the run settings, and the strategy (as make_streaming.hpp is for Streaming DiLoCo).

#include <memory>
#include <string>
#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/demo.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// The strategy's options; the weight decay is AdamW's (validate() checks the numbers).
DemoConfig demo_config(const TrainConfig& config);
// "key=value\n" lines: a resume under other DeMo options is refused.
std::string demo_identity(const StrategySection& s);
// The settings every peer of a DeMo run must agree on.
void add_demo_settings(const TrainConfig& config, std::vector<proto::Setting>& settings);

// With `overlapped` and strategy.demo-late, the rounds overlap the next step (demo.hpp).
std::unique_ptr<Strategy> make_demo(const TrainConfig& config, InnerLoop& loop, GatherGroup& group,
                                    OverlappedGather* overlapped = nullptr);

}  // namespace loco::train
