#pragma once
// Token (+ position) embedding: out[b,t] = wte[tokens[b,t]] + wpe[t].

#include <cstdint>

#include "loco/model/layers/views.hpp"

namespace loco::model {

// out[b·t, c] from tokens[b·t], wte[vocab, c] and wpe[≥t, c] (wpe may be null: no positions).
// Tokens must already be checked to lie in [0, vocab).
void embedding_forward(float* out, const std::int32_t* tokens, const float* wte, const float* wpe,
                       Index b, Index t, Index c);

// dwte[tokens[i]] += dout[i]; dwpe[pos] += Σ_b dout[b,pos] (dwpe may be null). Rows are added in
// order, so repeated tokens accumulate in one fixed order.
void embedding_backward(float* dwte, float* dwpe, const float* dout, const std::int32_t* tokens,
                        Index b, Index t, Index c);

}  // namespace loco::model
