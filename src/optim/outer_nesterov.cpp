#include "loco/optim/outer_nesterov.hpp"

#include <fmt/format.h>

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

void outer_nesterov_step(const OuterNesterovConfig& config, std::span<float> theta,
                         std::span<float> momentum, std::span<const float> delta) {
  LOCO_ASSERT(theta.size() == momentum.size() && theta.size() == delta.size(),
              "outer step over spans of different sizes");
  const float lr = config.lr, mu = config.momentum;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    momentum[i] = mu * momentum[i] + delta[i];
    theta[i] = theta[i] - lr * (delta[i] + mu * momentum[i]);
  }
}

}  // namespace loco::optim
