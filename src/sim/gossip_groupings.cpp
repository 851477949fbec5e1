#include "loco/sim/gossip_groupings.hpp"

#include <algorithm>
#include <cstring>

#include "loco/core/rng.hpp"

namespace loco::sim {

std::vector<proto::PeerKey> GossipGroupings::group_of(const proto::GossipRound& r,
                                                      std::span<const proto::PeerKey> live,
                                                      const proto::PeerKey& self) {
  std::uint64_t digest = 0;
  for (const proto::PeerKey& p : live) {
    std::uint64_t word = 0;
    std::memcpy(&word, p.bytes.data(), sizeof word);
    digest = mix64(digest ^ word);
  }
  auto [it, added] = cache_.try_emplace({r.round, live.size(), digest});
  Grouping& g = it->second;
  if (added) {
    g.groups = proto::gossip_groups(r, live);
    for (std::size_t i = 0; i < g.groups.size(); ++i)
      for (const proto::PeerKey& p : g.groups[i]) g.group_index.emplace_back(p, i);
    std::sort(g.group_index.begin(), g.group_index.end());
  }
  const auto at =
      std::lower_bound(g.group_index.begin(), g.group_index.end(), std::pair(self, std::size_t{0}));
  std::vector<proto::PeerKey> group;
  if (at != g.group_index.end() && at->first == self) group = g.groups[at->second];
  // The oldest rounds' go first (a peer far behind may have just added one: it is computed again
  // if it is asked for again).
  if (cache_.size() > kKept) cache_.erase(cache_.begin());
  return group;
}

}  // namespace loco::sim
