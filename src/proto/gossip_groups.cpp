#include "loco/proto/gossip_groups.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"

namespace loco::proto {
namespace {

std::uint64_t hash_bytes(std::uint64_t h, std::span<const std::byte> bytes) {
  for (const std::byte b : bytes) h = mix64(h ^ static_cast<std::uint64_t>(b));
  return h;
}

// The grid's number of axes: the least k ≥ 1 with g^k ≥ n.
std::size_t axes(std::size_t n, std::size_t g) {
  std::size_t k = 1;
  for (std::size_t cells = g; cells < n; cells *= g) ++k;
  return k;
}

// Cell index `cell` with its digit on `axis` moved to the least significant place: sorting by it
// puts the lines along `axis` next to each other.
std::uint64_t axis_last(std::uint64_t cell, std::size_t axis, std::size_t g) {
  std::uint64_t place = 1;
  for (std::size_t a = 0; a < axis; ++a) place *= g;
  const std::uint64_t digit = (cell / place) % g;
  const std::uint64_t low = cell % place;
  const std::uint64_t high = cell / (place * g);
  return (high * place + low) * g + digit;
}

}  // namespace

std::vector<std::vector<PeerKey>> gossip_groups(const GossipRound& r,
                                                std::span<const PeerKey> live) {
  LOCO_ASSERT(r.group_size >= 2 && r.group_size <= 8, "gossip groups of 2 to 8");
  const std::size_t n = live.size();
  const std::size_t g = r.group_size;
  if (n == 0) return {};
  const std::size_t k = axes(n, g);
  const std::uint64_t cycle = r.round / k;
  const std::size_t axis = r.round % k;
  const auto run = std::as_bytes(std::span(r.run_id.data(), r.run_id.size()));
  const std::uint64_t key = hash_bytes(mix64(cycle + 0x5eed), run);

  // 1. The grid: peers in the order of a keyed hash of their keys, cell i for the i-th.
  std::vector<std::pair<std::uint64_t, PeerKey>> order;
  order.reserve(n);
  for (const PeerKey& p : live)
    order.emplace_back(hash_bytes(key, std::as_bytes(std::span(p.bytes))), p);
  std::sort(order.begin(), order.end());
  LOCO_ASSERT(std::adjacent_find(order.begin(), order.end()) == order.end(), "a peer listed twice");

  // 2. This round's axis last, so each line along it is a run of consecutive cells.
  std::vector<std::pair<std::uint64_t, std::size_t>> lines(n);
  for (std::size_t i = 0; i < n; ++i) lines[i] = {axis_last(i, axis, g), i};
  std::sort(lines.begin(), lines.end());

  // 3. Cut into groups of g, a line at a time; a last group of one joins the one before it.
  std::vector<std::vector<PeerKey>> groups;
  std::uint64_t line = ~std::uint64_t{0};
  for (const auto& [cell, i] : lines) {
    if (cell / g != line || groups.back().size() == g) groups.emplace_back();
    line = cell / g;
    groups.back().push_back(order[i].second);
  }
  // Partial lines (n < g^k) leave groups of one: each joins the next group in grid order (the
  // last one the group before it).
  for (std::size_t i = 0; i < groups.size() && groups.size() > 1;) {
    if (groups[i].size() > 1) {
      ++i;
      continue;
    }
    auto& into = i + 1 < groups.size() ? groups[i + 1] : groups[i - 1];
    into.push_back(groups[i].front());
    groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(i));
  }
  for (auto& group : groups) std::sort(group.begin(), group.end());
  return groups;
}

std::vector<PeerKey> gossip_group_of(const GossipRound& r, std::span<const PeerKey> live,
                                     const PeerKey& self) {
  for (auto& group : gossip_groups(r, live))
    if (std::find(group.begin(), group.end(), self) != group.end()) return group;
  return {};
}

}  // namespace loco::proto
