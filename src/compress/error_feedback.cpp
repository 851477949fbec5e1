#include "loco/compress/error_feedback.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::compress {

std::vector<std::byte> ErrorFeedback::encode(const Codec& codec, std::span<const float> values,
                                             const EncodeOptions& options) {
  LOCO_ASSERT(values.size() == residual_.size(), "error feedback: wrong number of values");
  for (std::size_t i = 0; i < values.size(); ++i) residual_[i] += values[i];
  auto message = codec.encode(residual_, options);
  scratch_.resize(values.size());
  codec.decode(message, scratch_);
  for (std::size_t i = 0; i < values.size(); ++i) residual_[i] -= scratch_[i];
  return message;
}

void ErrorFeedback::reset() {
  std::fill(residual_.begin(), residual_.end(), 0.0f);
}

}  // namespace loco::compress
