#pragma once
// A training run's state as one safetensors checkpoint (checkpoint/safetensors.hpp):
//   tensors  <name>            the parameters, under the model's own names (nanoGPT's for a GPT)
//            optim.m.<name>    AdamW first moments
//            optim.v.<name>    AdamW second moments
//   metadata loco.format = "loco-train/1", loco.step (steps done), loco.adamw_steps,
//            loco.cursor (the training sampler's cursor), loco.config (TrainConfig::identity())
// Everything needed to continue bit for bit.

#include <cstdint>
#include <filesystem>
#include <string>

#include "loco/core/arena.hpp"
#include "loco/optim/adamw.hpp"

namespace loco::train {

struct RunPosition {
  std::uint64_t step = 0;  // optimizer steps completed
  std::string cursor;      // BatchSampler::save()
};

// Writes atomically. Throws Error(io) when the file cannot be written.
void save_train_state(const std::filesystem::path& path, const Arena& params,
                      const optim::AdamW& optimizer, const RunPosition& position,
                      const std::string& identity);

// Restores params and optimizer state and returns where the run stood. Throws Error(format) for
// a damaged file or one that is not a loco-train checkpoint, and Error(config) when it was
// written under another model or data configuration (`identity` differs), naming the first
// differing option.
RunPosition load_train_state(const std::filesystem::path& path, Arena& params,
                             optim::AdamW& optimizer, const std::string& identity);

}  // namespace loco::train
