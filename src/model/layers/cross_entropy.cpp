#include "loco/model/layers/cross_entropy.hpp"

#include <cmath>

namespace loco::model {

float cross_entropy_forward(float* probs, float* losses, const float* logits,
                            const std::int32_t* targets, Index n, Index v) {
#pragma omp parallel for schedule(static) if (n * v >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    const ConstRowVecView z(logits + i * v, v);
    RowVecView p(probs + i * v, v);
    const float max = z.maxCoeff();
    const float target_logit = z[targets[i]];  // read before p overwrites z when they alias
    p = (z.array() - max).exp().matrix();
    const float sum = p.sum();
    p /= sum;
    // −log p[target] from the logits, exact even when p[target] underflows.
    losses[i] = std::log(sum) - (target_logit - max);
  }
  double total = 0.0;
  for (Index i = 0; i < n; ++i) total += losses[i];
  return static_cast<float>(total / static_cast<double>(n));
}

void cross_entropy_backward(float* dlogits, const float* probs, const std::int32_t* targets,
                            Index n, Index v) {
  const float scale = 1.0f / static_cast<float>(n);
#pragma omp parallel for schedule(static) if (n * v >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    RowVecView d(dlogits + i * v, v);
    d = ConstRowVecView(probs + i * v, v) * scale;
    d[targets[i]] -= scale;
  }
}

}  // namespace loco::model
