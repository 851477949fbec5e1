#pragma once
// The groupings of gossip rounds (proto::gossip_groups), computed once for all the simulated peers
// instead of once by each: a grouping costs O(n log n) over the live set, and 1,000 peers each
// computing it every round made it the simulator's largest cost. Peers group a round over its
// roster, the same at every peer that got the tracker's views in time (gossip_roster.hpp), so a
// grouping is named by the round and a digest of the roster. A real peer computes its own group
// (swarm_session.cpp).

#include <map>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "loco/proto/gossip_groups.hpp"

namespace loco::sim {

class GossipGroupings {
 public:
  // proto::gossip_group_of(r, live, self), `live` sorted.
  std::vector<proto::PeerKey> group_of(const proto::GossipRound& r,
                                       std::span<const proto::PeerKey> live,
                                       const proto::PeerKey& self);

 private:
  struct Grouping {
    std::vector<std::vector<proto::PeerKey>> groups;
    std::vector<std::pair<proto::PeerKey, std::size_t>> group_index;  // sorted by key
  };
  static constexpr std::size_t kKept = 256;  // groupings kept, the newest rounds'
  // By round and roster: its size and a hash of its keys.
  std::map<std::tuple<std::uint64_t, std::size_t, std::uint64_t>, Grouping> cache_;
};

}  // namespace loco::sim
