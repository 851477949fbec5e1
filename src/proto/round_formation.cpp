#include "loco/proto/round_formation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace loco::proto {

TimePoint formation_time(const QuorumInput& in) {
  const std::size_t ready = in.ready;
  if (ready < std::max<std::size_t>(in.min_peers, 1)) return kNever;
  const TimePoint timed = std::max(in.now, in.first_ready + in.join_timeout);
  if (ready == in.eligible && in.previous_group_ready)
    return in.catching_up == 0 ? in.now : timed;  // those fetching are waited for, not forever
  if (2 * ready <= in.live) return kNever;
  if (in.straggler_wait > Duration::zero() && in.catching_up == 0)
    return std::max(in.now, in.first_ready + in.straggler_wait);
  return timed;
}

TimePoint release_time(const QuorumInput& in) {
  const std::size_t ready = in.ready;
  if (ready == 0 || ready >= std::max<std::size_t>(in.min_peers, 1)) return kNever;
  return std::max(in.now, in.first_ready + in.join_timeout);
}

Screened screen_updates(const std::map<PeerKey, ReadyEntry>& ready, float limit, float floor) {
  std::vector<float> finite;
  for (const auto& [key, entry] : ready)
    if (std::isfinite(entry.update_norm)) finite.push_back(std::max(entry.update_norm, 0.0f));
  float median = 0;
  if (!finite.empty()) {
    // The upper median: members that understate their norms, even half of the group, cannot pull
    // it below every honest one and get honest updates refused; those that overstate can only
    // make the screen laxer, and their updates are bounded where they are summed.
    const auto mid = finite.begin() + static_cast<std::ptrdiff_t>(finite.size() / 2);
    std::nth_element(finite.begin(), mid, finite.end());
    median = *mid;
  }
  median = std::max(median, floor);
  Screened out;
  out.median_norm = median;
  for (const auto& [key, entry] : ready) {
    if (!std::isfinite(entry.update_norm)) {
      out.refused[key] = "its update is not finite (NaN or infinite values)";
    } else if (entry.update_norm > limit * median) {
      out.refused[key] = fmt::format(
          "its update's norm {:.4g} is {:.1f}x the group's median {:.4g}"
          " (the limit is {}x)",
          entry.update_norm, entry.update_norm / median, median, limit);
    } else {
      out.group.push_back(key);
    }
  }
  return out;
}

std::uint32_t trim_count(float trim, std::size_t members) {
  if (trim <= 0 || members < 3) return 0;
  const auto wanted = static_cast<std::size_t>(std::ceil(trim * static_cast<float>(members)));
  return static_cast<std::uint32_t>(std::min(wanted, (members - 1) / 2));
}

std::vector<PeerKey> ring_order(std::vector<PeerKey> group,
                                const std::map<PeerKey, ReadyEntry>& ready) {
  const auto bps = [&](const PeerKey& k) {
    const auto it = ready.find(k);
    return it == ready.end() ? 0 : it->second.upload_bps;
  };
  std::sort(group.begin(), group.end(), [&](const PeerKey& a, const PeerKey& b) {
    return bps(a) != bps(b) ? bps(a) > bps(b) : a < b;
  });
  return group;
}

}  // namespace loco::proto
