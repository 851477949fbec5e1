#pragma once
// Fully connected layer with PyTorch's weight orientation [out, in]:
//   out = in · weightᵀ + bias
// The products run in Eigen (multi-threaded over output blocks, so every output element is
// summed by one thread in a fixed order: deterministic for a given thread count).

#include "loco/model/layers/views.hpp"

namespace loco::model {

// out[n,oc] = in[n,c] · weight[oc,c]ᵀ + bias[oc]; bias may be null.
void linear_forward(float* out, const float* in, const float* weight, const float* bias, Index n,
                    Index c, Index oc);

// din[n,c] = dout · weight (overwritten; may be null to skip);
// dweight[oc,c] += doutᵀ · in; dbias[oc] += column sums of dout (dbias may be null).
void linear_backward(float* din, float* dweight, float* dbias, const float* dout, const float* in,
                     const float* weight, Index n, Index c, Index oc);

}  // namespace loco::model
