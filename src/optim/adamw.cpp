#include "loco/optim/adamw.hpp"

#include <cmath>
#include <string>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::optim {

void AdamWConfig::validate() const {
  auto in_unit = [](float x) { return x >= 0.0f && x < 1.0f; };
  if (!in_unit(beta1) || !in_unit(beta2)) {
    throw Error(ErrorCategory::config, "AdamW: beta1 and beta2 must be in [0, 1)");
  }
  if (!(eps > 0.0f) || !(weight_decay >= 0.0f) || !(grad_clip >= 0.0f)) {
    throw Error(ErrorCategory::config,
                "AdamW: eps must be positive, weight_decay and grad_clip non-negative");
  }
}

AdamW::AdamW(std::shared_ptr<const ArenaLayout> layout, const AdamWConfig& config)
    : config_(config), m_(layout), v_(layout) {
  config_.validate();
}

double global_norm(const Arena& grads) {
  double sum = 0.0;
  for (const float g : grads.data()) sum += static_cast<double>(g) * g;  // padding is zero
  return std::sqrt(sum);
}

float AdamW::step(Arena& params, const Arena& grads, float lr) {
  LOCO_ASSERT(params.layout() == m_.layout() && grads.layout() == m_.layout(),
              "AdamW step: arenas of another layout");
  const double norm = global_norm(grads);
  const float clip_scale = config_.grad_clip > 0.0f && norm > config_.grad_clip
                               ? static_cast<float>(config_.grad_clip / norm)
                               : 1.0f;
  ++steps_;
  const double t = static_cast<double>(steps_);
  const float bias1 = static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta1), t));
  const float bias2 = static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta2), t));
  const float b1 = config_.beta1, b2 = config_.beta2, eps = config_.eps;

  const ArenaLayout& layout = params.layout();
  for (std::size_t i = 0; i < layout.tensor_count(); ++i) {
    const float decay = layout.tensor(i).shape.size() >= 2 ? config_.weight_decay : 0.0f;
    float* p = params.tensor(i).data();
    const float* g = grads.tensor(i).data();
    float* m = m_.tensor(i).data();
    float* v = v_.tensor(i).data();
    const auto n = static_cast<std::ptrdiff_t>(layout.tensor(i).numel);
#pragma omp parallel for schedule(static) if (n >= (std::ptrdiff_t{1} << 15))
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      const float gj = g[j] * clip_scale;
      m[j] = b1 * m[j] + (1.0f - b1) * gj;
      v[j] = b2 * v[j] + (1.0f - b2) * gj * gj;
      const float m_hat = m[j] / bias1;
      const float v_hat = v[j] / bias2;
      p[j] -= lr * (m_hat / (std::sqrt(v_hat) + eps) + decay * p[j]);
    }
  }
  return static_cast<float>(norm);
}

}  // namespace loco::optim
