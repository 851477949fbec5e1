#pragma once
// The groupings of gossip rounds (proto::gossip_groups), computed once for all the simulated peers
// instead of once by each: a grouping costs O(n log n) over the live set, and 1,000 peers each
// computing it every round made it the simulator's largest cost. Every peer that groups a round
// under the view of one epoch groups the same live set (a view is the tracker's, one per epoch),
// so (round, epoch) names a grouping. A real peer computes its own group (swarm_session.cpp).

#include <map>
#include <span>
#include <utility>
#include <vector>

#include "loco/proto/gossip_groups.hpp"

namespace loco::sim {

class GossipGroupings {
 public:
  // proto::gossip_group_of(r, live, self), with `live` the view of r.epoch.
  std::vector<proto::PeerKey> group_of(const proto::GossipRound& r,
                                       std::span<const proto::PeerKey> live,
                                       const proto::PeerKey& self);

 private:
  struct Grouping {
    std::vector<std::vector<proto::PeerKey>> groups;
    std::vector<std::pair<proto::PeerKey, std::size_t>> group_index;  // sorted by key
  };
  static constexpr std::size_t kKept = 256;  // groupings kept, the newest rounds'
  std::map<std::pair<std::uint64_t, std::uint64_t>, Grouping> cache_;  // by (round, epoch)
};

}  // namespace loco::sim
