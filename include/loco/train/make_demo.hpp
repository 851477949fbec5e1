#pragma once
// DeMo from loco-train's options: its config and checks, its codec, the lines it adds to the
// checkpoint identity and the run settings, its log line and the strategy (as make_streaming.hpp
// is for Streaming DiLoCo); its row in strategy_kinds.cpp points here.

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
// Throws Error(config): strategy.codec does not apply (the demo options set its messages), then
// what DemoConfig::validate refuses.
void validate_demo(const TrainConfig& config);
// Its DCT top-k codec from the demo options.
std::string demo_codec_spec(const StrategySection& s);
// E.g. "demo beta=0.999 late=false codec=demo:chunk=64,topk=32,values=sign".
std::string describe_demo(const StrategySection& s);
// "key=value\n" lines: a resume under other DeMo options is refused.
std::string demo_identity(const StrategySection& s);
// The settings every peer of a DeMo run must agree on.
void add_demo_settings(const TrainConfig& config, std::vector<proto::Setting>& settings);

// With `overlapped` and strategy.demo-late, the rounds overlap the next step (demo.hpp).
std::unique_ptr<Strategy> make_demo(const TrainConfig& config, InnerLoop& loop, GatherGroup& group,
                                    OverlappedGather* overlapped = nullptr);

}  // namespace loco::train
