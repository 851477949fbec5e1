#pragma once
// Arenas (loco/core/arena.hpp) in and out of safetensors checkpoints: each tensor of an arena
// becomes one checkpoint tensor named `prefix + tensor name`, so parameters and optimizer
// moments can share one file ("param.wte", "adam_m.wte", ...). Padding is not stored.

#include <string_view>
#include <vector>

#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/arena.hpp"

namespace loco::checkpoint {

// Appends one TensorRef per tensor of `arena`; they point into the arena, which must outlive
// the write.
void append_arena(std::vector<TensorRef>& out, const Arena& arena, std::string_view prefix);

// Fills every tensor of `arena` from the file. Throws Error(format) naming the file and tensor
// when one is missing or its shape differs from the arena's.
void load_arena(const SafetensorsFile& file, Arena& arena, std::string_view prefix);

}  // namespace loco::checkpoint
