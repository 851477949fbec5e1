#pragma once
// Helpers shared by the model tests: random token batches and perturbed parameters.

#include <cstdint>
#include <vector>

#include "loco/core/arena.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/model.hpp"

namespace loco::model::testing {

// A batch of uniformly random tokens (targets too) that owns its storage.
struct OwnedBatch {
  std::vector<std::int32_t> inputs, targets;
  std::size_t batch = 0, seq = 0;
  TokenBatch view() const { return TokenBatch{inputs, targets, batch, seq}; }
};

inline OwnedBatch random_batch(std::size_t batch, std::size_t seq, std::size_t vocab,
                               std::uint64_t seed) {
  Rng rng(seed);
  OwnedBatch b{{}, {}, batch, seq};
  for (std::size_t i = 0; i < batch * seq; ++i) {
    b.inputs.push_back(static_cast<std::int32_t>(rng.below(vocab)));
    b.targets.push_back(static_cast<std::int32_t>(rng.below(vocab)));
  }
  return b;
}

// Adds N(0, scale²) to every parameter, so biases and LayerNorm gains are not at their special
// initial values (0 and 1) and every gradient path carries signal.
inline void perturb(Arena& params, float scale, std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t i = 0; i < params.layout().tensor_count(); ++i) {
    for (float& v : params.tensor(i)) v += scale * rng.normal();
  }
}

}  // namespace loco::model::testing
