#pragma once
// Causal multi-head self-attention core (the projections around it are linear layers):
//   per batch row b and head h, with q, k, v the head's slices of qkv[b] (T × hs each),
//   P = softmax_causal(q·kᵀ / √hs)   (entries above the diagonal are 0)
//   out[b, :, head h] = P · v
// Heads are processed in parallel, one (b, h) pair per task; each task writes its own columns,
// so results do not depend on the thread count.

#include "loco/model/layers/views.hpp"

namespace loco::model {

// out[b·t, c] and probs[b, nh, t, t] from qkv[b·t, 3c] (q | k | v, each c = nh·hs wide).
void attention_forward(float* out, float* probs, const float* qkv, Index b, Index t, Index c,
                       Index nh);

// dqkv[b·t, 3c] (overwritten) from dout[b·t, c]; dprobs[b, nh, t, t] is scratch.
void attention_backward(float* dqkv, float* dprobs, const float* dout, const float* qkv,
                        const float* probs, Index b, Index t, Index c, Index nh);

}  // namespace loco::model
