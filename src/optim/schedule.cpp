#include "loco/optim/schedule.hpp"

#include <cmath>
#include <numbers>

#include "loco/core/error.hpp"

namespace loco::optim {

void LrSchedule::validate() const {
  if (!(max_lr > 0.0f) || !(min_lr >= 0.0f) || min_lr > max_lr) {
    throw Error(ErrorCategory::config, "learning rate: need 0 <= min_lr <= max_lr and max_lr > 0");
  }
  if (warmup_steps > total_steps) {
    throw Error(ErrorCategory::config, "learning rate: warmup_steps must not exceed total_steps");
  }
}

float LrSchedule::at(std::uint64_t step) const {
  if (step < warmup_steps) {
    return max_lr * static_cast<float>(step + 1) / static_cast<float>(warmup_steps);
  }
  if (step >= total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  return static_cast<float>(min_lr + cosine * (max_lr - min_lr));
}

}  // namespace loco::optim
