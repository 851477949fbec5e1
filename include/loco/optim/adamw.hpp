#pragma once
// AdamW with global gradient-norm clipping, over whole arenas (one pass over the spans):
//   g ← g · min(1, clip / ‖g‖₂)                       (‖g‖ over every tensor together)
//   m ← β1·m + (1−β1)·g;   v ← β2·v + (1−β2)·g²
//   p ← p − lr·( m̂ / (√v̂ + ε) + wd·p )   with m̂ = m/(1−β1ᵗ), v̂ = v/(1−β2ᵗ)
// Weight decay applies to matrices only (tensors of rank ≥ 2), never to biases or LayerNorm
// gains. Element updates are independent, so the result does not depend on the thread count;
// the norm is summed in double in a fixed order.

#include <cstdint>
#include <memory>

#include "loco/core/arena.hpp"

namespace loco::optim {

struct AdamWConfig {
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
  float grad_clip = 1.0f;  // max global L2 norm; 0 disables clipping

  void validate() const;  // throws Error(config)
};

class AdamW {
 public:
  AdamW(std::shared_ptr<const ArenaLayout> layout, const AdamWConfig& config);

  // One update of `params` from `grads` at learning rate `lr`. Returns the gradient norm
  // before clipping.
  float step(Arena& params, const Arena& grads, float lr);

  const AdamWConfig& config() const { return config_; }
  // The optimizer state, for checkpoints: the moments and the number of steps taken.
  Arena& m() { return m_; }
  Arena& v() { return v_; }
  const Arena& m() const { return m_; }
  const Arena& v() const { return v_; }
  std::uint64_t steps() const { return steps_; }
  void set_steps(std::uint64_t steps) { steps_ = steps; }

 private:
  AdamWConfig config_;
  Arena m_, v_;
  std::uint64_t steps_ = 0;
};

// ‖g‖₂ over every tensor of the arena, summed in double in arena order.
double global_norm(const Arena& grads);

}  // namespace loco::optim
