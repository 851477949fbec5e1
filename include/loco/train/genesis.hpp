#pragma once
// A run's genesis: the shared state every peer of a new run starts from, computed from the run's
// config alone, no data read: the model's initial parameters (from train.seed, or the --init
// file) as the strategy's first shared part, every other part zero, at round 0. What each
// strategy's begin(Start::fresh) makes, and tested to be. The tracker admits peers against its
// hash, so that no member can choose the state a run starts from (docs/SECURITY.md). An external
// model's ([model] kind = "external") comes from its genesis file (genesis_file.hpp).

#include <filesystem>
#include <memory>
#include <string>

#include "loco/core/arena.hpp"
#include "loco/model/model.hpp"
#include "loco/train/shared_state.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// Throws Error(config) for an external model, which only a trainer peer trains: what loco-train
// and loco-peer check first, before they read any data.
void require_own_model(const TrainConfig& config);

// The model of config.model, for batches of config.train.batch (require_own_model first).
std::unique_ptr<model::Model> make_model(const TrainConfig& config);

// Fills `params` (of the model's layout) with the run's initial parameters. Throws what
// load_init_params throws for a bad --init file.
void initial_parameters(const TrainConfig& config, const model::Model& model, Arena& params);

// The names of the strategy's shared arenas (its row's in strategy_kinds.hpp; none without one).
std::vector<std::string> shared_state_names(const TrainConfig& config);

// Throws what read_genesis throws for an external model's genesis file.
SharedState genesis_state(const TrainConfig& config);

// Writes the genesis file of loco's own model of `config` (its initial parameters: the seed's, or
// train.init's) to `path` (loco-train --write-genesis) and returns its BLAKE2b-256 in hex: the
// same model as a run of kind "external" that trainer peers train.
std::string write_model_genesis(const TrainConfig& config, const std::filesystem::path& path);

}  // namespace loco::train
