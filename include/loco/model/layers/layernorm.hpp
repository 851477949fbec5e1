#pragma once
// LayerNorm over the last dimension (eps 1e-5, as GPT-2):
//   out = (in − mean) · rstd · weight + bias,   rstd = 1 / sqrt(var + eps)
// mean and rstd are kept per row for the backward pass.

#include "loco/model/layers/views.hpp"

namespace loco::model {

inline constexpr float kLayerNormEps = 1e-5f;

// out[n,c], mean[n], rstd[n] from in[n,c], weight[c], bias[c].
void layernorm_forward(float* out, float* mean, float* rstd, const float* in, const float* weight,
                       const float* bias, Index n, Index c);

// din[n,c] += gradient through the normalisation; dweight[c] += Σ dout·x̂; dbias[c] += Σ dout.
void layernorm_backward(float* din, float* dweight, float* dbias, const float* dout,
                        const float* in, const float* weight, const float* mean, const float* rstd,
                        Index n, Index c);

}  // namespace loco::model
