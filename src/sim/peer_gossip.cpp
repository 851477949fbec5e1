// PeerNode in gossip mode (docs/DESIGN.md §1.6): after its inner phase it averages with the group
// proto::gossip_groups gives it for round r (a ring per group) and trains
// on; no ready, no commit. Members' states differ by design, so a group averages the packed
// vector θ ‖ v ‖ Δ (3 x dim values: the ring's bytes are 3 x those of all-reduce mode) and each
// member applies the outer step to (θ̄, v̄) with Δ̄: the group's members end identical.
//   - Round r groups its roster (proto/gossip_roster.hpp): the members the tracker's views list
//     for that round, the same at every peer whenever it gets there. A peer the roster does not
//     list (a newcomer's first rounds: the tracker lists it a round or two ahead; the first round
//     of a run) applies alone at once.
//   - A peer ahead of the run (past the tracker's next round, HeartbeatAck::next_round: the one
//     most members train for) waits for its group past gossip_wait until the run gets there: its
//     partners are alive, only slower, and one that applied alone would train on alone, ahead of
//     every grouping it is in.
//   - A group is whole or not at all: when a member does not take part in the round (crashed,
//     left, or back as a new process listed from a later round: present_in_round), the others
//     apply alone, before their ring or during it, whichever the view that tells them finds.
//     Every member concludes alike, whenever it starts the round; a rerun without the lost member
//     stranded the members that had finished the ring before the loss (the mean was theirs).
//   - A group not done within gossip_wait once the run is at its round (a view that came late):
//     the peer applies its own state and update alone. Never a partial mean.
#include <algorithm>

#include "loco/proto/gossip_groups.hpp"
#include "loco/sim/peer_node.hpp"

namespace loco::sim {

void PeerNode::start_gossip_round() {
  packed_ = state_.theta;
  packed_.insert(packed_.end(), state_.momentum.begin(), state_.momentum.end());
  packed_.insert(packed_.end(), delta_.begin(), delta_.end());
  const proto::GossipRound round{
      .run_id = world_.client.run_id, .round = ready_round_, .group_size = world_.gossip_group};
  gossip_group_ = world_.groupings->group_of(round, client_->gossip_roster(ready_round_), key_);
  attempt_ = 0;
  if (gossip_group_.size() < 2 || !gossip_group_whole()) return apply_gossip(packed_, {key_});
  start_all_reduce(proto::Group{.round = ready_round_,
                                .attempt = 0,
                                .epoch = client_->view().epoch,
                                .members = gossip_group_,
                                .median_norm = 0,
                                .norm_limit = 0},
                   packed_);
  arm_gossip_wait(ready_round_);
}

bool PeerNode::gossip_group_whole() const {
  return std::all_of(gossip_group_.begin(), gossip_group_.end(), [&](const proto::PeerKey& m) {
    return client_->present_in_round(m, ready_round_);
  });
}

void PeerNode::arm_gossip_wait(std::uint64_t round) {
  at(world_.loop->now() + world_.gossip_wait, [round](PeerNode& self) {
    if (self.ready_round_ != round || self.mean_done_) return;
    if (self.client_->next_round() < round) return self.arm_gossip_wait(round);
    self.world_.ledger->gossip_wait_expired();
    self.apply_gossip(self.packed_, {self.key_});
  });
}

void PeerNode::gossip_view_changed() {
  if (ready_round_ != 0 && all_reduce_ && !mean_done_ && !gossip_group_whole())
    apply_gossip(packed_, {key_});  // a member lost mid-ring
}

void PeerNode::apply_gossip(std::span<const float> mean,
                            const std::vector<proto::PeerKey>& members) {
  const std::size_t dim = state_.theta.size();
  PeerState next{.round = ready_round_,
                 .theta = {mean.begin(), mean.begin() + static_cast<std::ptrdiff_t>(dim)},
                 .momentum = {mean.begin() + static_cast<std::ptrdiff_t>(dim),
                              mean.begin() + static_cast<std::ptrdiff_t>(2 * dim)}};
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum,
                             mean.subspan(2 * dim));
  proto::StateManifest manifest = next.manifest();
  world_.ledger->group_installed(world_.loop->now(), key_, state_.round, next.round, attempt_,
                                 members, manifest.state_hash());
  state_ = std::move(next);
  all_reduce_.reset();
  ready_round_ = 0;
  client_->forget_removals_before(state_.round + 1);
  ++installed_;
  disk_.checkpoint = state_;
  serve_current(std::move(manifest));
  client_->state_report();  // the tracker points peers that join far behind at the newest state
  drive_client();
  start_training();
}

}  // namespace loco::sim
