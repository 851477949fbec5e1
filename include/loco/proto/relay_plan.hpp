#pragma once
// The tracker's relay decisions for a round's group, as pure functions (docs/TRACKER.md,
// "Relays"). Two members both measured unreachable cannot connect to each other; their link goes
// through a reachable member of the group, the relay, which forwards the end-to-end encrypted
// bytes (relay_core.hpp). Which pairs need one depends on who talks to whom (RelayLinks): the
// direct exchange and the all-gather link every pair; a ring links each member with its two
// neighbours only.
//
// Cost: k unreachable members need k(k-1)/2 relayed links in a group linking every pair, and a
// relay carries each of its links' bytes twice (in and out). The ring order puts each unreachable
// member after a reachable one while they last, so a ring of r reachable and k unreachable
// members needs max(0, k - r) relayed links (none while k <= r). A group takes as many unreachable
// members as its relays' declared budgets (JoinRequest::relay_pairs) can link.

#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

enum class RelayLinks { every_pair, ring_neighbours };

// One member of a group as the planner sees it.
struct RelaySeat {
  PeerKey key;
  bool unreachable = false;       // measured unreachable (unmeasured counts as reachable)
  std::uint32_t relay_pairs = 0;  // its budget, if it is reachable
  bool barred = false;            // blamed for a relayed link this round: relays nothing
};

// How many unreachable members a group can link with B, the sum of the reachable, unbarred
// members' budgets: every pair, the largest k with k(k-1)/2 <= B; a ring with r >= 1 members not
// measured unreachable, r + B (interleaved, see above). At least 1: one needs no relay.
// `max_relayed_links` (0: none) caps B: a group plans at most that many relayed links, whatever
// its relays' budgets (a ring of hundreds, each relayed neighbour an extra hop, docs/SCALE.md).
std::size_t max_unreachable(std::span<const RelaySeat> seats, RelayLinks links,
                            std::uint64_t max_relayed_links = 0);

// A relay for every pair of unreachable members of `seats` (in group order) that `links` needs:
// every pair, or ring neighbours (the last member's neighbour is the first); each through the
// reachable, unbarred member with the most budget left (ties: the earlier in group order).
// Nothing when a pair finds no relay: call it with at most max_unreachable() of them.
std::vector<RelayRoute> plan_relays(std::span<const RelaySeat> seats, RelayLinks links);

// A ring order that keeps unreachable members apart: `order` (fastest first) with each
// unreachable member placed after a reachable one while reachable ones last, so that as many ring
// neighbours as possible link directly. Same input, same order: every peer derives the same ring.
std::vector<PeerKey> interleave_unreachable(std::span<const RelaySeat> order);

}  // namespace loco::proto
