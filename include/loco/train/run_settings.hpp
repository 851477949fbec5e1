#pragma once
// The settings of a training run that every peer must share, because they fix the shared state:
// the model's shape, the parameter seed, the init file's digest (--init), the data source. The
// tracker refuses a peer whose settings differ, naming the first that does (proto/admission.hpp),
// so a misconfigured volunteer is told at once instead of averaging updates of another model.
// With an init file, run_settings() reads it (so the tracker needs a copy too).

#include <vector>

#include "loco/proto/tracker_messages.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(io) when config.train.init is set and cannot be read.
// The strategy's settings follow strategy.kind, in its row's order (strategy_kinds.hpp).
std::vector<proto::Setting> run_settings(const TrainConfig& config);

// What a strategy's row adds: strategy.codec (the codec's spec in full) and strategy.all-reduce.
void add_codec_setting(const TrainConfig& config, std::vector<proto::Setting>& settings);
void add_all_reduce_setting(const TrainConfig& config, std::vector<proto::Setting>& settings);

}  // namespace loco::train
