// TrackerCore in gossip mode (docs/DESIGN.md §1.6): groups average among themselves and nothing is
// committed, so each member's state is its own. A peer that joins far behind the run (a newcomer,
// or a peer restarted without its checkpoint) copies a healthy neighbour instead of dragging its
// groups back towards the initial state and grouping with no one (a grouping is keyed by the
// round, so a peer at another round than the others meets nobody).

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

// The round most members are at (ties: the newer), and there the state most of them hold (ties:
// the smaller hash). Members being told to copy a state are not counted.
std::optional<HeldState> TrackerCore::healthy_state() const {
  std::map<std::uint64_t, std::size_t> at_round;
  std::map<std::pair<std::uint64_t, Digest>, std::size_t> holders;
  for (const auto& [key, m] : members_) {
    if (m.resyncing) continue;
    ++at_round[m.state_round];
    ++holders[{m.state_round, m.state_hash}];
  }
  if (at_round.empty()) return std::nullopt;
  std::uint64_t round = 0;
  std::size_t most = 0;
  for (const auto& [r, count] : at_round)
    if (count >= most) std::tie(round, most) = std::pair(r, count);
  std::optional<HeldState> best;
  std::size_t best_count = 0;
  for (auto it = holders.lower_bound({round, Digest{}});
       it != holders.end() && it->first.first == round; ++it)
    if (it->second > best_count) {
      best = HeldState{.round = round, .hash = it->first.second, .holders = it->second};
      best_count = it->second;
    }
  return best;
}

void TrackerCore::catch_up_if_behind(TimePoint now, const PeerKey& peer) {
  const MemberRecord& m = members_.at(peer);
  const std::optional<HeldState> healthy = healthy_state();
  if (!healthy || healthy->round <= m.state_round) return;
  // A peer with its own rounds keeps them within the lag; one at round 0 (a new volunteer, or one
  // back without its checkpoint) holds no rounds of its own: it copies whatever the lag.
  if (m.state_round != 0 && m.state_round + config_.gossip_max_lag >= healthy->round) return;
  event(TrackerEvent::Kind::notice, peer,
        fmt::format("joined at round {}, {} behind most members: copies a neighbour's round {}",
                    m.state_round, healthy->round - m.state_round, healthy->round));
  send_resync(now, peer, healthy->round, healthy->hash);
}

void TrackerCore::gossip_state_reported(std::uint64_t round) {
  gossip_frontier_ = std::max(gossip_frontier_, round);
}

// Also at the start of a run: the first round any roster lists is 0 + lead (2 by default), since
// peers that join while the first ones group round 1 would otherwise split it. Every peer applies
// the run's first round alone.
std::uint64_t TrackerCore::gossip_change_round() const {
  return gossip_frontier_ + config_.gossip_round_lead;
}

std::uint64_t TrackerCore::gossip_next_round(TimePoint now) {
  const bool stale =
      !gossip_next_round_at_ || now - *gossip_next_round_at_ >= std::chrono::seconds(1);
  if (stale && !members_.empty()) {
    std::vector<std::uint64_t> rounds;
    rounds.reserve(members_.size());
    for (const auto& [key, m] : members_) rounds.push_back(m.state_round);
    const auto median = rounds.begin() + static_cast<std::ptrdiff_t>(rounds.size() / 2);
    std::nth_element(rounds.begin(), median, rounds.end());
    gossip_next_round_ = *median + 1;
    gossip_next_round_at_ = now;
  }
  return gossip_next_round_;
}

// A member admitted since the last broadcast has first_round 0 (a stamp is at least the lead, 1 or
// more): it is stamped when the view that lists it goes out, not when it joined, so a frontier
// that moved in between still leaves the lead.
void TrackerCore::stamp_admitted_members() {
  for (auto& [key, m] : members_)
    if (m.member.first_round == 0) m.member.first_round = gossip_change_round();
}

}  // namespace loco::proto
