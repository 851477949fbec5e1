#include "token_checks.hpp"

#include <string>

#include "loco/core/error.hpp"

namespace loco::model {
namespace {

void check_tokens(std::span<const std::int32_t> tokens, std::size_t vocab, std::string_view what,
                  const char* which) {
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || static_cast<std::size_t>(tokens[i]) >= vocab) {
      throw Error(ErrorCategory::invalid_argument,
                  std::string(what) + ": " + which + " token " + std::to_string(tokens[i]) +
                      " at position " + std::to_string(i) + " is outside the vocabulary of " +
                      std::to_string(vocab) + "; check the token file and the model's vocab");
    }
  }
}

}  // namespace

void check_batch(const TokenBatch& batch, std::size_t max_batch, std::size_t max_seq,
                 std::size_t vocab, std::string_view what) {
  if (batch.batch < 1 || batch.seq < 1 || batch.batch > max_batch || batch.seq > max_seq) {
    throw Error(ErrorCategory::invalid_argument,
                std::string(what) + ": a batch of " + std::to_string(batch.batch) + " × " +
                    std::to_string(batch.seq) + " tokens does not fit the model (at most " +
                    std::to_string(max_batch) + " × " + std::to_string(max_seq) + ")");
  }
  const std::size_t count = batch.batch * batch.seq;
  if (batch.inputs.size() != count || batch.targets.size() != count) {
    throw Error(ErrorCategory::invalid_argument, std::string(what) +
                                                     ": the batch's token spans do not hold " +
                                                     std::to_string(count) + " tokens each");
  }
  check_tokens(batch.inputs, vocab, what, "input");
  check_tokens(batch.targets, vocab, what, "target");
}

}  // namespace loco::model
