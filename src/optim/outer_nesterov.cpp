#include "loco/optim/outer_nesterov.hpp"

#include <fmt/format.h>

#include <cstddef>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::optim {

void OuterNesterovConfig::validate() const {
  if (!(lr > 0.0f) || !(momentum >= 0.0f && momentum < 1.0f))
    throw Error(ErrorCategory::config,
                fmt::format("outer Nesterov: lr must be positive and momentum in [0, 1) (got lr "
                            "{}, momentum {})",
                            lr, momentum));
}

namespace {

// The step for one element at a time, so that the in-place and out-of-place forms are the same
// float operations: θ' and v' each written only when wanted (a null output).
template <bool kTheta, bool kMomentum>
void step_each(const OuterNesterovConfig& config, const float* theta, const float* momentum,
               const float* delta, float* theta_out, float* momentum_out, std::size_t n) {
  const float lr = config.lr, mu = config.momentum;
  for (std::size_t i = 0; i < n; ++i) {
    const float m = mu * momentum[i] + delta[i];
    if constexpr (kMomentum) momentum_out[i] = m;
    if constexpr (kTheta) theta_out[i] = theta[i] - lr * (delta[i] + mu * m);
  }
}

}  // namespace

void outer_nesterov_step(const OuterNesterovConfig& config, std::span<float> theta,
                         std::span<float> momentum, std::span<const float> delta) {
  outer_nesterov_step_to(config, theta, momentum, delta, theta, momentum);
}

void outer_nesterov_step_to(const OuterNesterovConfig& config, std::span<const float> theta,
                            std::span<const float> momentum, std::span<const float> delta,
                            std::span<float> theta_out, std::span<float> momentum_out) {
  const std::size_t n = delta.size();
  LOCO_ASSERT(theta.size() == n && momentum.size() == n,
              "outer step over spans of different sizes");
  LOCO_ASSERT((theta_out.empty() || theta_out.size() == n) &&
                  (momentum_out.empty() || momentum_out.size() == n),
              "outer step into spans of another size");
  if (n == 0) return;
  if (!theta_out.empty() && !momentum_out.empty())
    step_each<true, true>(config, theta.data(), momentum.data(), delta.data(), theta_out.data(),
                          momentum_out.data(), n);
  else if (!theta_out.empty())
    step_each<true, false>(config, theta.data(), momentum.data(), delta.data(), theta_out.data(),
                           nullptr, n);
  else if (!momentum_out.empty())
    step_each<false, true>(config, theta.data(), momentum.data(), delta.data(), nullptr,
                           momentum_out.data(), n);
}

}  // namespace loco::optim
