#pragma once
// The modelled inner loop for thousands of simulated peers (compute_model.hpp). The loss is
// ½‖θ − θ*‖² / dim; H steps (or any number) of SGD with rate lr on it from θ, with gradient noise σ
// per step, give exactly in distribution
//   Δ = θ − θ_H = (1 − (1 − lr)^H)·(θ − θ*) + σ_H·ξ,   σ_H² = σ²·lr²·Σ_k (1 − lr)^(2k)
// where ξ is unit-variance, near-normal noise drawn from (seed, peer, phase): cheap (one pass
// over θ, one 64-bit draw a value) and deterministic, whatever else the peer did.

#include "loco/sim/compute_model.hpp"

namespace loco::sim {

struct NoisyQuadraticConfig {
  std::size_t dim = 1024;          // values in θ (and in v)
  std::uint32_t inner_steps = 50;  // H
  float inner_lr = 0.02f;
  float noise = 1.0f;  // σ of each step's gradient
  optim::OuterNesterovConfig outer;
  std::uint64_t seed = 0;
};

class NoisyQuadratic final : public ComputeModel {
 public:
  explicit NoisyQuadratic(NoisyQuadraticConfig config);

  std::size_t dim() const override { return config_.dim; }
  std::uint32_t inner_steps() const override { return config_.inner_steps; }
  const optim::OuterNesterovConfig& outer() const override { return config_.outer; }
  // Zeros; the target θ* is drawn from the seed.
  std::vector<float> genesis() const override { return std::vector<float>(config_.dim, 0.0f); }
  std::vector<float> pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                     std::uint64_t phase, std::uint32_t steps) override;
  float loss(std::span<const float> theta) override;

 private:
  struct Phase {
    float pull = 0;    // 1 − (1 − lr)^steps
    float spread = 0;  // σ_steps
  };
  Phase phase_of(std::uint32_t steps) const;

  NoisyQuadraticConfig config_;
  std::vector<float> target_;
  Phase h_steps_;  // the usual phase, computed once
};

}  // namespace loco::sim
