#pragma once
// A peer's inner loop, modelled for thousands of simulated peers: H steps take H x the peer's
// step time, and they turn θ into a pseudo-gradient drawn from a noisy quadratic instead of a
// model's training. The loss is ½‖θ − θ*‖² / dim; H steps of SGD with rate lr on it from θ, with
// gradient noise σ per step, give exactly in distribution
//   Δ = θ − θ_H = (1 − (1 − lr)^H)·(θ − θ*) + σ_H·ξ,   σ_H² = σ²·lr²·Σ_k (1 − lr)^(2k)
// where ξ is standard normal noise drawn from (seed, peer, round, attempt of the inner phase):
// cheap (one pass over θ) and deterministic. The outer step is loco's own (optim/outer_nesterov),
// so the shared state moves as DiLoCo's does.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/optim/outer_nesterov.hpp"

namespace loco::sim {

struct ComputeConfig {
  std::size_t dim = 1024;          // values in θ (and in v)
  std::uint32_t inner_steps = 50;  // H
  float inner_lr = 0.02f;
  float noise = 1.0f;  // σ of each step's gradient
  optim::OuterNesterovConfig outer;
  std::uint64_t seed = 0;
};

class ComputeModel {
 public:
  explicit ComputeModel(ComputeConfig config);

  const ComputeConfig& config() const { return config_; }
  // θ of round 0 (zeros) and the target θ* (drawn from the seed).
  std::vector<float> genesis() const { return std::vector<float>(config_.dim, 0.0f); }
  // Δ of `peer`'s inner phase number `phase` from `theta`.
  std::vector<float> pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                     std::uint64_t phase) const;
  float loss(std::span<const float> theta) const;

 private:
  ComputeConfig config_;
  std::vector<float> target_;
  float pull_ = 0;    // 1 − (1 − lr)^H
  float spread_ = 0;  // σ_H
};

}  // namespace loco::sim
