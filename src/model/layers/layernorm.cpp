#include "loco/model/layers/layernorm.hpp"

#include <cmath>

namespace loco::model {

void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, Index n, Index c) {
  const ConstRowVecView w(weight, c);
  const ConstRowVecView b(bias, c);
#pragma omp parallel for schedule(static) if (n * c >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    const ConstRowVecView x(in + i * c, c);
    const float m = x.sum() / static_cast<float>(c);
    const float var = (x.array() - m).square().sum() / static_cast<float>(c);
    const float s = 1.0f / std::sqrt(var + kLayerNormEps);
    RowVecView(out + i * c, c) = ((x.array() - m) * s * w.array() + b.array()).matrix();
    mean[i] = m;
    rstd[i] = s;
  }
}

void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout,
                        const float* in, const float* weight, const float* mean, const float* rstd,
                        Index n, Index c) {
  const ConstRowVecView w(weight, c);
  // din: rows are independent.
#pragma omp parallel for schedule(static) if (n * c >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    const auto xhat = (ConstRowVecView(in + i * c, c).array() - mean[i]) * rstd[i];
    const auto dnorm = ConstRowVecView(dout + i * c, c).array() * w.array();
    const float dnorm_mean = dnorm.sum() / static_cast<float>(c);
    const float dnorm_xhat_mean = (dnorm * xhat).sum() / static_cast<float>(c);
    RowVecView(din + i * c, c).array() += (dnorm - dnorm_mean - xhat * dnorm_xhat_mean) * rstd[i];
  }
  // dweight, dbias: sums over rows, in row order (one fixed order for any thread count).
  RowVecView dw(dweight, c);
  RowVecView db(dbias, c);
  for (Index i = 0; i < n; ++i) {
    const ConstRowVecView dy(dout + i * c, c);
    dw.array() += dy.array() * (ConstRowVecView(in + i * c, c).array() - mean[i]) * rstd[i];
    db += dy;
  }
}

}  // namespace loco::model
