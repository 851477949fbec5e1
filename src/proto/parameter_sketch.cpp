#include "loco/proto/parameter_sketch.hpp"

#include <cmath>
#include <cstdint>

#include "loco/core/rng.hpp"

namespace loco::proto {

ParameterSketch sketch_parameters(std::span<const float> theta) {
  std::array<double, kSketchSize> sums{};
  for (std::size_t i = 0; i < theta.size(); ++i) {
    // 32 signs from one hash of the index: bit j is σ_j(i).
    const std::uint64_t signs = mix64(i + 0x736b65746368ULL);  // "sketch"
    const double v = theta[i];
    for (std::size_t j = 0; j < kSketchSize; ++j) sums[j] += (signs >> j & 1) != 0 ? v : -v;
  }
  ParameterSketch out{};
  const double scale = theta.empty() ? 0.0 : 1.0 / std::sqrt(static_cast<double>(theta.size()));
  for (std::size_t j = 0; j < kSketchSize; ++j) out[j] = static_cast<float>(sums[j] * scale);
  return out;
}

double sketch_spread(std::span<const ParameterSketch> sketches) {
  const std::size_t n = sketches.size();
  if (n < 2) return 0;
  double squares = 0;
  for (std::size_t j = 0; j < kSketchSize; ++j) {
    double mean = 0;
    for (const ParameterSketch& s : sketches) mean += s[j];
    mean /= static_cast<double>(n);
    for (const ParameterSketch& s : sketches) squares += (s[j] - mean) * (s[j] - mean);
  }
  return std::sqrt(squares / static_cast<double>(n * kSketchSize));
}

}  // namespace loco::proto
