#pragma once
// A run's genesis: the shared state every peer of a new run starts from, computed from the run's
// config alone, no data read: the model's initial parameters (from train.seed, or the --init
// file) as the strategy's first shared part, every other part zero, at round 0. What each
// strategy's begin(Start::fresh) makes, and tested to be. The tracker admits peers against its
// hash, so that no member can choose the state a run starts from (docs/SECURITY.md).

#include <memory>

#include "loco/core/arena.hpp"
#include "loco/model/model.hpp"
#include "loco/train/shared_state.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// The model of config.model, for batches of config.train.batch.
std::unique_ptr<model::Model> make_model(const TrainConfig& config);

// Fills `params` (of the model's layout) with the run's initial parameters. Throws what
// load_init_params throws for a bad --init file.
void initial_parameters(const TrainConfig& config, const model::Model& model, Arena& params);

// The names of the strategy's shared arenas (config.strategy.kind; none for kind "none").
std::vector<std::string> shared_state_names(const TrainConfig& config);

SharedState genesis_state(const TrainConfig& config);

}  // namespace loco::train
