#include "loco/core/sum_of_squares.hpp"

#include <array>
#include <cstddef>

namespace loco {

double sum_of_squares(std::span<const float> values) {
  constexpr std::size_t kLanes = 8;
  std::array<double, kLanes> lanes{};
  const std::size_t whole = values.size() - values.size() % kLanes;
  for (std::size_t i = 0; i < whole; i += kLanes)
    for (std::size_t k = 0; k < kLanes; ++k)
      lanes[k] += static_cast<double>(values[i + k]) * values[i + k];
  for (std::size_t i = whole; i < values.size(); ++i)
    lanes[i - whole] += static_cast<double>(values[i]) * values[i];
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
         ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

}  // namespace loco
