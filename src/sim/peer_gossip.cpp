// PeerNode in gossip mode (DESIGN.md §1.6): after its inner phase a peer averages with the group
// proto::gossip_groups gives it for round r (a ring per group) and trains
// on; no ready, no commit. Members' states differ by design, so a group averages the packed
// vector θ ‖ v ‖ Δ (3 x dim values: the ring's bytes are 3 x those of all-reduce mode) and each
// member applies the outer step to (θ̄, v̄) with Δ̄: the group's members end identical.
//   - The grouping of round r comes from the last view that added members when the round starts
//     here (a newcomer is in no earlier view, so every member takes the view it arrived in), so a
//     member lost while the group trains does not split it; members that left since are dropped
//     from it. A view that adds members once the round's ring runs does not start it again (that
//     stranded the members that had finished it: 15% fewer rounds in the 1,000-peer hour).
//   - A member lost mid-ring: the tracker's next view drops it, and the group's survivors (the
//     members still in the view, the same set for each of them) run the ring again as the next
//     attempt, so they end identical.
//   - A peer whose view does not list it yet waits for one that does (or gossip_wait): applying
//     alone would strand the partner the others' grouping gives it for the round.
//   - A group not done within gossip_wait (a partner at another round, a grouping the partners
//     did not share): the peer applies its own state and update alone. Never a partial mean.
#include <algorithm>

#include "loco/proto/gossip_groups.hpp"
#include "loco/sim/peer_node.hpp"

namespace loco::sim {

void PeerNode::take_gossip_view() {
  if (!gossip_live_.empty() &&
      std::includes(gossip_live_.begin(), gossip_live_.end(), view_keys_.begin(), view_keys_.end()))
    return;
  gossip_live_ = view_keys_;
  gossip_epoch_ = client_->view().epoch;
}

void PeerNode::start_gossip_round() {
  packed_ = state_.theta;
  packed_.insert(packed_.end(), state_.momentum.begin(), state_.momentum.end());
  packed_.insert(packed_.end(), delta_.begin(), delta_.end());
  const proto::GossipRound round{.run_id = world_.client.run_id,
                                 .round = ready_round_,
                                 .epoch = gossip_epoch_,
                                 .group_size = world_.gossip_group};
  if (!std::binary_search(gossip_live_.begin(), gossip_live_.end(), key_)) {
    // No view lists this peer yet (it joined while the tracker's broadcast was pending): no
    // grouping to compute. Alone now, it would strand the partners the others' grouping gives it;
    // it waits for the view (gossip_view_changed), or gossip_wait.
    gossip_group_.clear();
    at(world_.loop->now() + world_.gossip_wait, [r = ready_round_](PeerNode& self) {
      if (self.ready_round_ == r && !self.ring_) self.apply_gossip(self.packed_, {self.key_});
    });
    return;
  }
  gossip_group_ = world_.groupings->group_of(round, gossip_live_, key_);
  start_gossip_ring();
}

// The group's members still in the current view; the attempt is how many it lost, so members that
// start the round before and after a view change agree on both.
void PeerNode::start_gossip_ring() {
  std::vector<proto::PeerKey> members;
  for (const proto::PeerKey& m : gossip_group_)
    if (m == key_ || is_member(m)) members.push_back(m);
  const auto attempt = static_cast<std::uint32_t>(gossip_group_.size() - members.size());
  if (members.size() < 2) {
    ring_attempt_ = attempt;
    apply_gossip(packed_, {key_});
    return;
  }
  const std::uint64_t round = ready_round_;
  start_ring(proto::Group{.round = round,
                          .attempt = attempt,
                          .epoch = gossip_epoch_,
                          .members = std::move(members),
                          .median_norm = 0,
                          .norm_limit = 0},
             packed_);
  at(world_.loop->now() + world_.gossip_wait, [round, attempt](PeerNode& self) {
    if (self.ready_round_ == round && self.ring_attempt_ == attempt && !self.mean_done_)
      self.apply_gossip(self.packed_, {self.key_});
  });
}

void PeerNode::gossip_view_changed() {
  take_gossip_view();
  if (ready_round_ == 0 || mean_done_) return;
  if (!ring_) return start_gossip_round();  // it waited for a view that lists it
  const auto lost = std::count_if(ring_members_.begin(), ring_members_.end(),
                                  [&](const proto::PeerKey& m) { return !is_member(m); });
  if (lost > 0) start_gossip_ring();
}

// `mean`: the group's mean of θ ‖ v ‖ Δ.
void PeerNode::apply_gossip(std::span<const float> mean,
                            const std::vector<proto::PeerKey>& members) {
  const std::size_t dim = state_.theta.size();
  PeerState next{.round = ready_round_,
                 .theta = {mean.begin(), mean.begin() + static_cast<std::ptrdiff_t>(dim)},
                 .momentum = {mean.begin() + static_cast<std::ptrdiff_t>(dim),
                              mean.begin() + static_cast<std::ptrdiff_t>(2 * dim)}};
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum,
                             mean.subspan(2 * dim));
  world_.ledger->group_installed(world_.loop->now(), key_, state_.round, next.round, ring_attempt_,
                                 members, next.manifest().state_hash());
  state_ = std::move(next);
  ring_.reset();
  ready_round_ = 0;
  ++installed_;
  disk_.checkpoint = state_;
  serve_current();
  client_->state_report();  // the tracker points peers that join far behind at the newest state
  drive_client();
  start_training();
}

}  // namespace loco::sim
