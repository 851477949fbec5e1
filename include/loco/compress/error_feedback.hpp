#pragma once
// Error feedback: what a lossy codec dropped this round is carried into the next round's input,
// so that over rounds nothing is lost (docs/DESIGN.md §1.5; DeMo's δ ← δ − IDCT(kept) is the
// same step with the DCT codec).
//
//   corrected = values + residual
//   message   = codec.encode(corrected)
//   residual  = corrected − codec.decode(message)

#include <cstddef>
#include <span>
#include <vector>

#include "loco/compress/codec.hpp"

namespace loco::compress {

class ErrorFeedback {
 public:
  explicit ErrorFeedback(std::size_t count) : residual_(count, 0.0f) {}

  // Encodes values + residual and keeps the new residual. `values.size()` must equal the count
  // given at construction (LOCO_ASSERT).
  std::vector<std::byte> encode(const Codec& codec, std::span<const float> values,
                                const EncodeOptions& options = {});

  std::span<const float> residual() const { return residual_; }
  void reset();  // forget the carried error (e.g. after re-fetching the shared state)

 private:
  std::vector<float> residual_;
  std::vector<float> scratch_;
};

}  // namespace loco::compress
