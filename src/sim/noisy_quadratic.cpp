#include "loco/sim/noisy_quadratic.hpp"

#include <cmath>

#include "loco/core/rng.hpp"

namespace loco::sim {

NoisyQuadratic::NoisyQuadratic(NoisyQuadraticConfig config) : config_(config), target_(config.dim) {
  Rng rng(counter_u64(config_.seed, 0x7461726765740000ULL, 0));  // "target"
  for (float& t : target_) t = rng.normal();
  h_steps_ = phase_of(config_.inner_steps);
}

NoisyQuadratic::Phase NoisyQuadratic::phase_of(std::uint32_t steps) const {
  const double keep = 1.0 - config_.inner_lr;
  double variance = 0;
  for (std::uint32_t k = 0; k < steps; ++k) variance += std::pow(keep, 2.0 * k);
  return Phase{
      .pull = static_cast<float>(1.0 - std::pow(keep, steps)),
      .spread = static_cast<float>(config_.noise * config_.inner_lr * std::sqrt(variance))};
}

namespace {

// Near-normal noise from one 64-bit draw: the sum of four 16-bit uniforms (Irwin–Hall), centred
// and scaled to unit variance. Tails end at ±3.46σ, which a stand-in for gradient noise can
// spare; Box–Muller's log and cos were a sixth of a 1,000-peer simulation's time.
float near_normal(Rng& rng) {
  const std::uint64_t bits = rng.next_u64();
  const auto sum = static_cast<float>((bits & 0xFFFF) + (bits >> 16 & 0xFFFF) +
                                      (bits >> 32 & 0xFFFF) + (bits >> 48));
  constexpr float kMean = 2.0f * 65535.0f;
  const float kScale = std::sqrt(3.0f) / 65535.0f;  // variance 4/12 of a 65535-wide uniform
  return (sum - kMean) * kScale;
}

}  // namespace

std::vector<float> NoisyQuadratic::pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                                   std::uint64_t phase, std::uint32_t steps) {
  const Phase p = steps == config_.inner_steps ? h_steps_ : phase_of(steps);
  Rng rng(counter_u64(config_.seed, peer, phase));
  std::vector<float> delta(theta.size());
  for (std::size_t j = 0; j < theta.size(); ++j)
    delta[j] = p.pull * (theta[j] - target_[j]) + p.spread * near_normal(rng);
  return delta;
}

float NoisyQuadratic::loss(std::span<const float> theta) {
  double sum = 0;
  for (std::size_t j = 0; j < theta.size(); ++j) {
    const double d = theta[j] - target_[j];
    sum += 0.5 * d * d;
  }
  return static_cast<float>(sum / static_cast<double>(theta.size()));
}

}  // namespace loco::sim
