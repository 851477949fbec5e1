#pragma once
// The raw pointer to tensor `index` of an arena, as the layer kernels take their buffers.

#include "loco/core/arena.hpp"

namespace loco::model {

inline float* ptr(Arena& arena, std::size_t index) {
  return arena.tensor(index).data();
}
inline const float* ptr(const Arena& arena, std::size_t index) {
  return arena.tensor(index).data();
}

}  // namespace loco::model
