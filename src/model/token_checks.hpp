#pragma once
// Checks a TokenBatch against a model's sizes before the model touches it.

#include <string_view>

#include "loco/model/model.hpp"

namespace loco::model {

// Throws Error(invalid_argument) if the batch is empty, larger than max_batch × max_seq, its
// spans do not hold batch × seq tokens, or a token lies outside [0, vocab).
void check_batch(const TokenBatch& batch, std::size_t max_batch, std::size_t max_seq,
                 std::size_t vocab, std::string_view what);

}  // namespace loco::model
