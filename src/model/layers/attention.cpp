#include "loco/model/layers/attention.hpp"

#include <cmath>

namespace loco::model {
namespace {

// The q, k or v slice (part 0, 1, 2) of head h in batch row bi: t × hs, rows 3c apart.
struct HeadSlices {
  Index row0;  // first row of batch row bi in the [b·t, ·] buffers
  Index head_col;
  Index hs;
};

HeadSlices head_of(Index task, Index t, Index c, Index nh) {
  const Index bi = task / nh;
  const Index h = task % nh;
  return HeadSlices{bi * t, h * (c / nh), c / nh};
}

}  // namespace

void attention_forward(float* out, float* probs, const float* qkv, Index b, Index t, Index c,
                       Index nh) {
  const Index c3 = 3 * c;
#pragma omp parallel for schedule(static) if (b * nh * t * t * (c / nh) >= kMinParallelWork)
  for (Index task = 0; task < b * nh; ++task) {
    const HeadSlices s = head_of(task, t, c, nh);
    const float* base = qkv + s.row0 * c3 + s.head_col;
    const ConstStridedView q(base, t, s.hs, Eigen::OuterStride<>(c3));          // [t, hs]
    const ConstStridedView k(base + c, t, s.hs, Eigen::OuterStride<>(c3));      // [t, hs]
    const ConstStridedView v(base + 2 * c, t, s.hs, Eigen::OuterStride<>(c3));  // [t, hs]
    MatView p(probs + task * t * t, t, t);                                      // [t, t]
    p.noalias() = q * k.transpose();
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.hs));
    for (Index i = 0; i < t; ++i) {
      auto row = p.row(i).head(i + 1).array();
      const float max = row.maxCoeff();
      row = ((row - max) * scale).exp();
      row /= row.sum();
      p.row(i).tail(t - i - 1).setZero();
    }
    StridedView y(out + s.row0 * c + s.head_col, t, s.hs, Eigen::OuterStride<>(c));  // [t, hs]
    y.noalias() = p.triangularView<Eigen::Lower>() * v;
  }
}

void attention_backward(float* dqkv, float* dprobs, const float* dout, const float* qkv,
                        const float* probs, Index b, Index t, Index c, Index nh) {
  const Index c3 = 3 * c;
#pragma omp parallel for schedule(static) if (b * nh * t * t * (c / nh) >= kMinParallelWork)
  for (Index task = 0; task < b * nh; ++task) {
    const HeadSlices s = head_of(task, t, c, nh);
    const float* base = qkv + s.row0 * c3 + s.head_col;
    const ConstStridedView q(base, t, s.hs, Eigen::OuterStride<>(c3));
    const ConstStridedView k(base + c, t, s.hs, Eigen::OuterStride<>(c3));
    const ConstStridedView v(base + 2 * c, t, s.hs, Eigen::OuterStride<>(c3));
    float* dbase = dqkv + s.row0 * c3 + s.head_col;
    StridedView dq(dbase, t, s.hs, Eigen::OuterStride<>(c3));
    StridedView dk(dbase + c, t, s.hs, Eigen::OuterStride<>(c3));
    StridedView dv(dbase + 2 * c, t, s.hs, Eigen::OuterStride<>(c3));
    const ConstStridedView dy(dout + s.row0 * c + s.head_col, t, s.hs, Eigen::OuterStride<>(c));
    const ConstMatView p(probs + task * t * t, t, t);
    MatView ds(dprobs + task * t * t, t, t);  // dP, then dS in place

    dv.noalias() = p.triangularView<Eigen::Lower>().transpose() * dy;
    ds.noalias() = dy * v.transpose();
    // Softmax backward on the causal part: dS = P ⊙ (dP − rowsum(P ⊙ dP)), scaled by 1/√hs.
    const float scale = 1.0f / std::sqrt(static_cast<float>(s.hs));
    for (Index i = 0; i < t; ++i) {
      auto dp_row = ds.row(i).head(i + 1).array();
      const auto p_row = p.row(i).head(i + 1).array();
      const float dot = (p_row * dp_row).sum();
      dp_row = p_row * (dp_row - dot) * scale;
      ds.row(i).tail(t - i - 1).setZero();
    }
    dq.noalias() = ds.triangularView<Eigen::Lower>() * k;
    dk.noalias() = ds.triangularView<Eigen::Lower>().transpose() * q;
  }
}

}  // namespace loco::model
