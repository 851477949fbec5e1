#pragma once
// Gossip mode's grouping (docs/DESIGN.md §1.6): which small group each peer of a round's roster
// (gossip_roster.hpp) averages with. A pure function of (run, round, g, the roster), so every
// peer computes the same grouping from the same roster without asking anyone.
//
// Moshpit-style grid. With n live peers and groups of g, the peers are placed in a grid of g^k
// cells (k = the least with g^k ≥ n, at least 1) in an order drawn from a keyed hash of (run,
// cycle), where a cycle is k consecutive rounds. Round r groups the peers that differ only
// in the coordinate on axis r mod k: on a full grid, k rounds average every peer with every other
// (each round averages along one axis), and the next cycle draws a new grid. On a partial grid the
// lines along the axis are partial; a line of one peer joins the next group in grid order (the last
// one the group before it), so no group is smaller than 2 unless only 1 peer is live, and none
// larger than g + 2.
// g = 2 is NoLoCo's pairwise averaging with one random partner.
//
// Each group's members are sorted by key (the ring order); groups are in grid order.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "loco/proto/round_formation.hpp"

namespace loco::proto {

struct GossipRound {
  std::string_view run_id;
  std::uint64_t round = 0;
  std::size_t group_size = 2;  // g, 2..8
};

// Every peer of `live` (the round's roster) in exactly one group. `live` need not be sorted;
// duplicates are not allowed.
std::vector<std::vector<PeerKey>> gossip_groups(const GossipRound& r,
                                                std::span<const PeerKey> live);

// The group holding `self` (empty when `self` is not live).
std::vector<PeerKey> gossip_group_of(const GossipRound& r, std::span<const PeerKey> live,
                                     const PeerKey& self);

}  // namespace loco::proto
