#pragma once
// A training run's state as one safetensors checkpoint (checkpoint/safetensors.hpp): a list of
// named arenas and counters, whatever the strategy keeps:
//   tensors  <name>                  the parameters, under the model's own names (nanoGPT's for a
//                                    GPT), so other tools read them as they are
//            <prefix>.<name>         every other arena: optim.m / optim.v (AdamW moments),
//                                    outer.params / outer.momentum (DiLoCo's shared state),
//                                    demo.momentum (DeMo's own δ), ...
//   metadata loco.format = "loco-state/1", loco.counter.<name> for each counter (step,
//            adamw_steps, round, ...), loco.cursor (the sampler's cursor), loco.config (the
//            options that fix the layout and data stream: TrainConfig::identity())
// Everything needed to continue bit for bit.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "loco/core/arena.hpp"

namespace loco::train {

struct NamedArena {
  std::string prefix;  // "" for the parameters
  Arena* arena;
};

struct StateFileValues {
  std::map<std::string, std::uint64_t> counters;
  std::string cursor;
};

// Writes atomically. Throws Error(io) when the file cannot be written.
void save_train_state(const std::filesystem::path& path, const std::vector<NamedArena>& arenas,
                      const StateFileValues& values, const std::string& identity);

// Fills every arena of `arenas` and returns the counters and cursor. Throws Error(format) for a
// damaged file, one that is not a loco checkpoint, or one without an arena or counter this run
// needs (naming it), and Error(config) when it was written under another model or data
// configuration (`identity` differs), naming the first differing option.
StateFileValues load_train_state(const std::filesystem::path& path,
                                 const std::vector<NamedArena>& arenas,
                                 const std::vector<std::string>& counters,
                                 const std::string& identity);

}  // namespace loco::train
