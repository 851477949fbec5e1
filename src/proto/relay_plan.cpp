#include "loco/proto/relay_plan.hpp"

#include <algorithm>

namespace loco::proto {
namespace {

bool can_relay(const RelaySeat& s) {
  return !s.unreachable && !s.barred && s.relay_pairs > 0;
}

}  // namespace

std::size_t max_unreachable(std::span<const RelaySeat> seats, RelayLinks links,
                            std::uint64_t max_relayed_links) {
  std::uint64_t budget = 0;
  std::size_t open = 0;
  for (const RelaySeat& s : seats) {
    if (can_relay(s)) budget += s.relay_pairs;
    if (!s.unreachable) ++open;
  }
  if (max_relayed_links > 0) budget = std::min(budget, max_relayed_links);
  if (links == RelayLinks::ring_neighbours)
    return open == 0 ? 1 : static_cast<std::size_t>(open + budget);
  std::size_t k = 1;
  while ((k + 1) * k / 2 <= budget) ++k;  // k + 1 members need (k + 1)k/2 links
  return k;
}

std::vector<RelayRoute> plan_relays(std::span<const RelaySeat> seats, RelayLinks links) {
  std::vector<std::uint32_t> left(seats.size(), 0);  // budget left per seat
  for (std::uint32_t i = 0; i < seats.size(); ++i)
    if (can_relay(seats[i])) left[i] = seats[i].relay_pairs;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  const auto n = static_cast<std::uint32_t>(seats.size());
  if (links == RelayLinks::ring_neighbours) {
    for (std::uint32_t i = 0; i < n && n > 1; ++i) {
      const std::uint32_t j = (i + 1) % n;
      if (seats[i].unreachable && seats[j].unreachable && (n > 2 || i < j))
        pairs.emplace_back(std::min(i, j), std::max(i, j));
    }
  } else {
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t j = i + 1; j < n; ++j)
        if (seats[i].unreachable && seats[j].unreachable) pairs.emplace_back(i, j);
  }
  std::vector<RelayRoute> routes;
  for (const auto& [a, b] : pairs) {
    const auto best = std::max_element(left.begin(), left.end());  // first of the largest
    if (best == left.end() || *best == 0) return routes;
    --*best;
    routes.push_back(
        RelayRoute{.a = a, .b = b, .via = static_cast<std::uint32_t>(best - left.begin())});
  }
  return routes;
}

std::vector<PeerKey> interleave_unreachable(std::span<const RelaySeat> order) {
  std::vector<PeerKey> open;
  std::vector<PeerKey> closed;
  for (const RelaySeat& s : order) (s.unreachable ? closed : open).push_back(s.key);
  std::vector<PeerKey> ring;
  ring.reserve(order.size());
  // Reachable ones in their order, each followed by an unreachable one while both last; the rest
  // of either after (more unreachable ones than reachable: some ring neighbours are relayed).
  std::size_t c = 0;
  for (const PeerKey& k : open) {
    ring.push_back(k);
    if (c < closed.size()) ring.push_back(closed[c++]);
  }
  ring.insert(ring.end(), closed.begin() + static_cast<std::ptrdiff_t>(c), closed.end());
  return ring;
}

}  // namespace loco::proto
