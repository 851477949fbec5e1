// TrackerCore relays: which members relay for the unreachable ones of a group
// (proto/relay_plan.hpp), how many of those a group takes, and what a relay that fails costs it.

#include <fmt/format.h>

#include <algorithm>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {

bool TrackerCore::relay_barred(const PeerKey& relay) const {
  const auto it = relays_barred_.find(relay);
  return it != relays_barred_.end() && next_round_attempt() <= it->second;
}

void TrackerCore::bar_relay(const PeerKey& relay) {
  if (relays_barred_.size() >= kMaxBarred && !relays_barred_.contains(relay)) {
    std::erase_if(relays_barred_,
                  [&](const auto& entry) { return entry.second < next_round_attempt(); });
    if (relays_barred_.size() >= kMaxBarred) relays_barred_.erase(relays_barred_.begin());
  }
  // Counted in round attempts, as benches are: a bar must run out in a run whose rounds fail.
  relays_barred_[relay] = next_round_attempt() + config_.accusation_bench_rounds;
  ++counters_.relays_blamed;
}

std::vector<RelaySeat> TrackerCore::relay_seats(const std::vector<PeerKey>& group) const {
  std::vector<RelaySeat> seats;
  seats.reserve(group.size());
  for (const PeerKey& k : group) {
    const MemberRecord& m = members_.at(k);
    seats.push_back(RelaySeat{
        .key = k,
        .unreachable = m.member.reachability == Reachability::unreachable,
        // Only a member the tracker reached relays: both ends dial it.
        .relay_pairs = m.member.reachability == Reachability::reachable ? m.relay_pairs : 0,
        .barred = relay_barred(k)});
  }
  return seats;
}

std::vector<PeerKey> TrackerCore::unlinked_members(const std::vector<PeerKey>& group) const {
  std::vector<PeerKey> closed;
  for (const PeerKey& k : group)
    if (members_.at(k).member.reachability == Reachability::unreachable) closed.push_back(k);
  const std::size_t cap =
      max_unreachable(relay_seats(group), relay_links_, config_.max_relayed_links);
  if (closed.size() <= cap) return {};
  // Each round others take part, so that none of them is left out for good.
  const auto first = static_cast<std::size_t>(next_round() * cap % closed.size());
  std::vector<PeerKey> out;
  for (std::size_t i = cap; i < closed.size(); ++i)
    out.push_back(closed[(first + i) % closed.size()]);
  return out;
}

std::vector<PeerKey> TrackerCore::linkable_group(std::vector<PeerKey> group) {
  const std::vector<PeerKey> out = unlinked_members(group);
  if (out.empty()) return group;
  const std::string reason = fmt::format(
      "round {}: {} members not reachable from the internet are more than its relays' budgets "
      "link; they sit this round out",
      next_round(), out.size());
  for (const PeerKey& k : out) {
    std::erase(group, k);
    ready_.erase(k);
    refused_.insert(k);  // told once a round: the others do not wait for it
    send(k, AbortRound{.round = next_round(), .attempt = 0, .reason = reason, .retry = false});
  }
  counters_.members_left_out += out.size();
  event(TrackerEvent::Kind::notice, std::nullopt, reason);
  return group;
}

// A relay that drops silently stalls its ends, and with them every member that needs their parts:
// at the deadline they are all stragglers. Once a round, when a straggler's link was relayed,
// the relays of the stragglers' links are blamed instead and the attempt retried with everyone;
// a second deadline in the round excludes the stragglers as usual.
bool TrackerCore::relays_timed_out(TimePoint now, const std::set<PeerKey>& stragglers) {
  if (relay_deadline_used_) return false;
  std::set<PeerKey> relays;
  for (const RelayRoute& r : attempt_->relays) {
    const auto& m = attempt_->members;
    if (stragglers.contains(m[r.a]) || stragglers.contains(m[r.b])) relays.insert(m[r.via]);
  }
  if (relays.empty()) return false;
  relay_deadline_used_ = true;
  for (const PeerKey& r : relays) {
    bar_relay(r);
    event(TrackerEvent::Kind::notice, r,
          fmt::format("round {}: a link it relayed did not finish within {} s; it relays nothing "
                      "for this and the run's next {} round attempt(s)",
                      next_round(), std::chrono::duration<double>(config_.round_timeout).count(),
                      config_.accusation_bench_rounds));
  }
  abort_attempt(
      now,
      fmt::format("{} member(s) did not finish within {} s, with relayed links: retried "
                  "with other relays",
                  stragglers.size(), std::chrono::duration<double>(config_.round_timeout).count()),
      {});
  return true;
}

void TrackerCore::relay_failed(TimePoint now, const PeerKey& from, const PeerKey& relay,
                               const std::string& report) {
  if (!reported_.insert(from).second) {
    bench(from);  // as a second failure of its own is (handle_round_failed)
    abort_attempt(now, report + " (its second report this round: it sits the retry out)", {from});
    return;
  }
  bar_relay(relay);
  event(TrackerEvent::Kind::notice, relay,
        fmt::format("round {}: {} blamed its relay {}; the relay carries nothing for this and the "
                    "run's next {} round attempt(s)",
                    next_round(), secure::short_id(from), secure::short_id(relay),
                    config_.accusation_bench_rounds));
  abort_attempt(now, report, {});
}

}  // namespace loco::proto
