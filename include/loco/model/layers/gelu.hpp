#pragma once
// GELU with GPT-2's tanh approximation:
//   gelu(x) = ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))

#include "loco/model/layers/views.hpp"

namespace loco::model {

// out[n,c] = gelu(in[n,c]).
void gelu_forward(float* out, const float* in, Index n, Index c);

// din[n,c] = dout · gelu'(in) (overwritten; din may equal dout).
void gelu_backward(float* din, const float* in, const float* dout, Index n, Index c);

}  // namespace loco::model
