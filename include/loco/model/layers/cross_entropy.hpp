#pragma once
// Softmax cross-entropy over a vocabulary, averaged over the rows:
//   loss = (1/n) Σ_i −log softmax(logits_i)[target_i]

#include <cstdint>

#include "loco/model/layers/views.hpp"

namespace loco::model {

// probs[n,v] = softmax(logits[n,v]) (probs may equal logits); losses[n] per row; returns the
// mean loss (summed in double, in row order). Targets must lie in [0, v).
float cross_entropy_forward(float* probs, float* losses, const float* logits,
                            const std::int32_t* targets, Index n, Index v);

// dlogits[n,v] = (probs − onehot(target)) / n (overwritten; dlogits may equal probs).
void cross_entropy_backward(float* dlogits, const float* probs, const std::int32_t* targets,
                            Index n, Index v);

}  // namespace loco::model
