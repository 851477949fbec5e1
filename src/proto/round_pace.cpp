#include "loco/proto/round_pace.hpp"

#include <algorithm>
#include <vector>

namespace loco::proto {

std::optional<Duration> paced_phase(std::span<const float> step_seconds,
                                    const RoundPacing& pacing) {
  if (!pacing.on()) return std::nullopt;
  std::vector<float> measured;
  for (const float s : step_seconds)
    if (s > 0) measured.push_back(s);  // finite, at most an hour: the decoder let no other in
  if (measured.empty()) {
    if (pacing.first <= Duration::zero()) return std::nullopt;
    return std::clamp(pacing.first, pacing.shortest, pacing.longest);
  }
  const auto mid = measured.begin() + static_cast<std::ptrdiff_t>((measured.size() - 1) / 2);
  std::nth_element(measured.begin(), mid, measured.end());
  const double seconds = static_cast<double>(pacing.steps) * static_cast<double>(*mid);
  const double longest = std::chrono::duration<double>(pacing.longest).count();
  const auto phase = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(std::min(seconds, longest)));
  return std::clamp(phase, pacing.shortest, pacing.longest);
}

}  // namespace loco::proto
