#pragma once
// SparseLoCo from loco-train's options: its config and checks, its codec, the lines it adds to
// the checkpoint identity and the run settings, its log line and the strategy (as make_demo.hpp
// is for DeMo); its row in strategy_kinds.cpp points here. H is strategy.diloco-h.

#include <memory>
#include <string>
#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/sparseloco.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

SparseLoCoConfig sparseloco_config(const StrategySection& s);
// Throws Error(config): strategy.codec does not apply (the sparseloco options set its messages),
// then what SparseLoCoConfig::validate refuses.
void validate_sparseloco(const TrainConfig& config);
// Its chunk top-k codec from the sparseloco options.
std::string sparseloco_codec_spec(const StrategySection& s);
// E.g. "sparseloco H=20 beta=0.95 outer-lr=1 clip=1
// codec=chunktopk:chunk=4096,topk=64,values=int2".
std::string describe_sparseloco(const StrategySection& s);
// "key=value\n" lines: a resume under other SparseLoCo options is refused.
std::string sparseloco_identity(const StrategySection& s);
// The settings every peer of a SparseLoCo run must agree on.
void add_sparseloco_settings(const TrainConfig& config, std::vector<proto::Setting>& settings);
// A round every H steps.
std::uint64_t sparseloco_final_round(const TrainConfig& config);

std::unique_ptr<Strategy> make_sparseloco(const TrainConfig& config, InnerLoop& loop,
                                          GatherGroup& group);

}  // namespace loco::train
