#pragma once
// The tracker's relay decisions for a round's group, as pure functions (docs/TRACKER.md,
// "Relays"). Two members both measured unreachable cannot connect to each other; their link goes
// through a reachable member of the group, the relay, which forwards the end-to-end encrypted
// bytes (relay_core.hpp). Every pair of unreachable members gets a relay (the direct exchange and
// the all-gather link every pair; a ring uses only its neighbours' routes).
//
// Cost: k unreachable members need k(k-1)/2 relayed links, and a relay carries each of its links'
// bytes twice (in and out). So a group takes as many unreachable members as its relays' declared
// budgets (JoinRequest::relay_pairs) can link, and the ring order puts each unreachable member
// next to reachable ones where it can, so that a ring's neighbours link directly.

#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

// One member of a group as the planner sees it.
struct RelaySeat {
  PeerKey key;
  bool unreachable = false;       // measured unreachable (unmeasured counts as reachable)
  std::uint32_t relay_pairs = 0;  // its budget, if it is reachable
  bool barred = false;            // blamed for a relayed link this round: relays nothing
};

// How many unreachable members a group can link: the largest k with k(k-1)/2 at most the sum of
// the reachable, unbarred members' budgets (at least 1: one unreachable member needs no relay).
std::size_t max_unreachable(std::span<const RelaySeat> seats);

// A relay for every pair of unreachable members of `seats` (in group order), each pair through
// the reachable, unbarred member with the most budget left (ties: the earlier in group order).
// Nothing when a pair finds no relay: call it with at most max_unreachable() of them.
std::vector<RelayRoute> plan_relays(std::span<const RelaySeat> seats);

// A ring order that keeps unreachable members apart: `order` (fastest first) with each
// unreachable member placed after a reachable one while reachable ones last, so that as many ring
// neighbours as possible link directly. Same input, same order: every peer derives the same ring.
std::vector<PeerKey> interleave_unreachable(std::span<const RelaySeat> order);

}  // namespace loco::proto
