#include "loco/sim/holding_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "loco/sim/swarm.hpp"

namespace loco::sim {
namespace {

constexpr std::size_t kMaxLostStates = 256;  // the oldest are forgotten past this

std::string short_hash(const Digest& hash) {
  return to_hex(hash).substr(0, 12);
}

}  // namespace

HoldingCheck::Held HoldingCheck::run_state(Swarm& swarm) const {
  if (swarm.gossip()) return {gossip_newest_, Digest{}};
  return swarm.tracker().committed();
}

void HoldingCheck::see_peers(Swarm& swarm) {
  const bool gossip = swarm.gossip();
  seen_.resize(swarm.peer_count());
  for (std::size_t i = 0; i < seen_.size(); ++i) {
    Seen& seen = seen_[i];
    if (swarm.stops(i) != seen.stops) {  // stopped by a fault since: its copies went with it
      for (const Held& held : {seen.held, seen.reported})
        if (held.first != 0) lost_by_fault_.insert(held);
      seen = Seen{.stops = swarm.stops(i)};
    }
    if (!swarm.peer_up(i) || !swarm.peer(i).in_run()) {
      seen.held = seen.reported = Held{};  // what a peer that left holds is no one's copy
      continue;
    }
    const PeerNode& peer = swarm.peer(i);
    seen.held = {peer.held_round(), gossip ? Digest{} : peer.held_hash()};
    seen.reported = gossip ? Held{} : Held{peer.reported_round(), peer.reported_hash()};
    lost_by_fault_.erase(seen.held);
    lost_by_fault_.erase(seen.reported);
    if (gossip) gossip_newest_ = std::max(gossip_newest_, seen.held.first);
  }
  while (lost_by_fault_.size() > kMaxLostStates) lost_by_fault_.erase(lost_by_fault_.begin());
}

void HoldingCheck::check(Swarm& swarm) {
  see_peers(swarm);
  const Held target = run_state(swarm);
  if (target != target_) {
    target_ = target;
    unheld_ = false;
  }
  if (target_.first == 0) return;  // the genesis: any peer makes it again
  const bool gossip = swarm.gossip();
  bool held = !gossip && swarm.tracker().custody_held() == target_;
  for (const Seen& seen : seen_)
    held = held || (gossip ? seen.held.first >= target_.first
                           : seen.held == target_ || seen.reported == target_);
  if (held) {
    unheld_ = false;
    return;
  }
  if (std::exchange(unheld_, true)) return;  // said once
  if (lost_by_fault_.contains(target_)) {
    ++lost_to_faults_;
    return;
  }
  std::string peers;
  for (std::size_t i = 0; i < seen_.size(); ++i)
    if (swarm.peer_up(i))
      peers += fmt::format("{}{} round {}{}", peers.empty() ? "" : ", ", i,
                           swarm.peer(i).held_round(), swarm.peer(i).in_run() ? "" : " (left)");
  swarm.ledger().violation(
      swarm.loop().now(),
      gossip ? fmt::format("round {}, the newest a group applied, is held by no live peer, and no "
                           "fault took its last copy (peers up: {})",
                           target_.first, peers.empty() ? "none" : peers)
             : fmt::format("committed round {} (state {}) is held by neither the tracker (custody: "
                           "round {}) nor a live member, and no fault took its last copy (peers "
                           "up: {})",
                           target_.first, short_hash(target_.second),
                           swarm.tracker().custody_held().first, peers.empty() ? "none" : peers));
}

}  // namespace loco::sim
