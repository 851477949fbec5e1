#pragma once
// A simulated peer's inner loop: what its inner steps turn θ into. The simulator times a phase as
// H x the peer's step time (or, with phases clocked by time, as the steps that fit in the phase)
// and asks the compute model only for its outcome, the pseudo-gradient Δ = θ − θ_steps. Two kinds:
//   - NoisyQuadratic (noisy_quadratic.hpp): a closed-form stand-in, one pass over θ, for
//     thousands of peers;
//   - ModelCompute (model_compute.hpp): the real inner loop (train::InnerLoop) of a small model
//     on each peer's own data shard, for tens of peers.
// The outer step is loco's own (optim/outer_nesterov), so the shared state moves as DiLoCo's does.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/optim/outer_nesterov.hpp"

namespace loco::sim {

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;

  virtual std::size_t dim() const = 0;            // values in θ (and in v)
  virtual std::uint32_t inner_steps() const = 0;  // H
  virtual const optim::OuterNesterovConfig& outer() const = 0;
  virtual std::vector<float> genesis() const = 0;  // θ of round 0
  // Δ of `steps` inner steps (at least 1), `peer`'s inner phase number `phase` (over all its
  // processes), from `theta`.
  virtual std::vector<float> pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                             std::uint64_t phase, std::uint32_t steps) = 0;
  virtual float loss(std::span<const float> theta) = 0;
};

}  // namespace loco::sim
