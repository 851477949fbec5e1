// PeerCore in gossip mode (docs/DESIGN.md §1.6): after its inner phase a peer averages with the
// group proto::gossip_groups gives it for round r and trains on; no ready, no commit. Members'
// states differ by design, so a group averages the packed vector θ ‖ v ‖ Δ (3 × the values of
// all-reduce mode) and each member applies the outer step to (θ̄, v̄) with Δ̄: the group's members
// end identical.
//   - Round r groups its roster (proto/gossip_roster.hpp): the members the tracker's views list
//     for that round, the same at every peer whenever it gets there. A peer the roster does not
//     list (a newcomer's first rounds; the first round of a run) is alone at once.
//   - A group is whole or not at all: when a member does not take part in the round (crashed,
//     left, or back as a new process listed from a later round), the others are alone, before
//     their exchange or during it, whichever view tells them. Every member concludes alike; a
//     rerun without the lost member would strand those that had finished before the loss.
//   - A peer ahead of the run (past the tracker's next round, HeartbeatAck::next_round) waits for
//     its group past gossip_wait until the run gets there: its partners are alive, only slower.
//     A group not done within gossip_wait once the run is at its round leaves the peer alone.
//     Never a partial mean.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "loco/proto/peer_core.hpp"

namespace loco::proto {

void PeerCore::ready_gossip(TimePoint now, std::uint64_t round, Update packed) {
  end_round();
  update_ = std::move(packed);
  gather_ = false;
  ready_round_ = round;
  client_.forget_removals_before(round);
  // Empty when the round's roster does not list this peer (a newcomer's first rounds).
  const std::vector<PeerKey> roster = client_.gossip_roster(round);
  group_ = config_.gossip_group_of(
      GossipRound{.run_id = run_id_, .round = round, .group_size = config_.gossip_group}, roster,
      config_.self);
  attempt_ = 0;
  if (group_.size() < 2) return alone("no group this round");
  if (!gossip_group_whole()) return alone("a member of the group does not take part");
  start_collective(Group{.round = round,
                         .attempt = 0,
                         .epoch = client_.view().epoch,
                         .members = group_,
                         .median_norm = 0,
                         .norm_limit = 0});
  if (collective_running()) gossip_deadline_ = now + config_.gossip_wait;
}

bool PeerCore::gossip_group_whole() const {
  return std::all_of(group_.begin(), group_.end(),
                     [&](const PeerKey& m) { return client_.present_in_round(m, ready_round_); });
}

void PeerCore::gossip_view_changed() {
  if (ready_round_ != 0 && collective_running() && !gossip_group_whole())
    fail_collective(fmt::format("a member of the group of round {} left", ready_round_),
                    std::nullopt);
}

void PeerCore::gossip_wait_over(TimePoint now) {
  gossip_deadline_ = kNever;
  if (ready_round_ == 0 || !collective_running()) return;
  if (client_.next_round() < ready_round_) {  // ahead of the run: its partners are only slower
    gossip_deadline_ = now + config_.gossip_wait;
    return;
  }
  waited_out_ = true;
  fail_collective(
      fmt::format("the group of round {} was not done in the gossip wait", ready_round_),
      std::nullopt);
}

// This peer applies its own state and update for the round: the mean event carries its own
// vector and itself as the only member.
void PeerCore::alone(const std::string& why) {
  PeerEvent& out = emit(PeerEvent::Kind::mean);
  out.round = ready_round_;
  out.text = why;
  out.members = {config_.self};
  out.waited_out = std::exchange(waited_out_, false);
  out.mean = std::make_shared<const RoundMean>(update_);
  end_round();
}

}  // namespace loco::proto
