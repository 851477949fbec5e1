#include "loco/proto/token_weights.hpp"

#include <algorithm>
#include <cmath>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

std::vector<std::uint64_t> weigh_tokens(std::span<const std::uint64_t> claims,
                                        const TokenWeighting& weighting) {
  const std::uint64_t step = weighting.step_tokens;
  if (step == 0 || step > kMaxRoundTokens || claims.empty()) return {};
  const std::uint64_t most = kMaxRoundTokens / step * step;
  std::vector<std::uint64_t> tokens;
  tokens.reserve(claims.size());
  for (const std::uint64_t claim : claims)
    tokens.push_back(std::clamp(claim / step * step, step, most));
  std::vector<std::uint64_t> sorted = tokens;
  const auto lower = sorted.begin() + static_cast<std::ptrdiff_t>((sorted.size() - 1) / 2);
  std::nth_element(sorted.begin(), lower, sorted.end());
  const double cap = std::floor(weighting.max_ratio * static_cast<double>(*lower));
  const std::uint64_t ceiling =
      cap >= static_cast<double>(most) ? most : std::max(step, static_cast<std::uint64_t>(cap));
  for (std::uint64_t& t : tokens) t = std::min(t, ceiling);
  return tokens;
}

std::vector<float> contribution_weights(std::span<const std::uint64_t> tokens) {
  double total = 0;  // exact: at most kMaxMembers × kMaxRoundTokens < 2^54
  for (const std::uint64_t t : tokens) total += static_cast<double>(t);
  std::vector<float> weights;
  weights.reserve(tokens.size());
  const auto n = static_cast<double>(tokens.size());
  for (const std::uint64_t t : tokens)
    weights.push_back(static_cast<float>(n * static_cast<double>(t) / total));
  return weights;
}

}  // namespace loco::proto
