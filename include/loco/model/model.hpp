#pragma once
// The model interface the optimizer and trainer see. A model owns no parameters: parameters and
// gradients are Arenas of the model's layout, owned by the caller (so optimizer moments, outer
// state, checkpoints and collectives all address the same table of tensors). A model owns only
// its activations, allocated once for its largest batch and reused by every step.
//
// Call order: forward(params, batch) then, optionally, backward(params, grads) for that same
// batch and parameters. forward may be called alone (evaluation).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "loco/core/arena.hpp"

namespace loco::model {

// A batch of next-token-prediction examples: row b of `inputs` is a sequence of token ids and
// row b of `targets` the tokens that follow each of them. Both are batch × seq, row-major.
struct TokenBatch {
  std::span<const std::int32_t> inputs;
  std::span<const std::int32_t> targets;
  std::size_t batch = 0;
  std::size_t seq = 0;
};

class Model {
 public:
  virtual ~Model() = default;

  // The table of parameter tensors. Tensors of rank >= 2 are matrices (weight decay applies).
  virtual const std::shared_ptr<const ArenaLayout>& layout() const = 0;

  // Writes the initial parameters for `seed`; the same seed gives the same bits everywhere.
  virtual void init(Arena& params, std::uint64_t seed) const = 0;

  // Mean cross-entropy (nats per token) of the batch; keeps the activations for backward.
  // Throws Error(invalid_argument) if the batch is larger than the model was sized for or a
  // token is outside the vocabulary.
  virtual float forward(const Arena& params, const TokenBatch& batch) = 0;

  // Overwrites `grads` with the gradient of the last forward's loss. Needs a forward with the
  // same `params` just before.
  virtual void backward(const Arena& params, Arena& grads) = 0;
};

// Sets the number of threads every model computation uses (OpenMP loops and Eigen products).
// Results are bit-identical for the same thread count.
void set_compute_threads(int threads);
int compute_threads();

}  // namespace loco::model
