#include "loco/model/layers/linear.hpp"

namespace loco::model {

void linear_forward(float* out, const float* in, const float* weight, const float* bias, Index n,
                    Index c, Index oc) {
  MatView y(out, n, oc);                // [n, oc]
  const ConstMatView x(in, n, c);       // [n, c]
  const ConstMatView w(weight, oc, c);  // [oc, c]
  y.noalias() = x * w.transpose();
  if (bias != nullptr) y.rowwise() += ConstRowVecView(bias, oc);
}

void linear_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                     const float* weight, Index n, Index c, Index oc) {
  const ConstMatView dy(dout, n, oc);   // [n, oc]
  const ConstMatView x(in, n, c);       // [n, c]
  const ConstMatView w(weight, oc, c);  // [oc, c]
  if (din != nullptr) MatView(din, n, c).noalias() = dy * w;
  MatView(dweight, oc, c).noalias() += dy.transpose() * x;
  // Column sums row by row, in row order: one fixed summation order for any thread count.
  if (dbias != nullptr) {
    RowVecView db(dbias, oc);
    for (Index i = 0; i < n; ++i) db += dy.row(i);
  }
}

}  // namespace loco::model
