#include "loco/train/disagreement_scale.hpp"

#include <algorithm>
#include <cmath>

#include "loco/core/assert.hpp"

namespace loco::train {

void scale_by_disagreement(std::span<float> mean, std::span<const std::vector<float>> deltas,
                           std::size_t block) {
  LOCO_ASSERT(block > 0 && !deltas.empty(), "a block and members are needed");
  const double members = static_cast<double>(deltas.size());
  const double most = std::sqrt(members);
  for (std::size_t begin = 0; begin < mean.size(); begin += block) {
    const std::size_t end = std::min(mean.size(), begin + block);
    double mean_squared = 0, members_squared = 0;
    for (std::size_t i = begin; i < end; ++i) {
      mean_squared += static_cast<double>(mean[i]) * mean[i];
      for (const std::vector<float>& delta : deltas)
        members_squared += static_cast<double>(delta[i]) * delta[i];
    }
    if (mean_squared == 0) continue;
    const double scale = std::clamp(std::sqrt(members_squared / members / mean_squared), 1.0, most);
    for (std::size_t i = begin; i < end; ++i)
      mean[i] = static_cast<float>(static_cast<double>(mean[i]) * scale);
  }
}

}  // namespace loco::train
