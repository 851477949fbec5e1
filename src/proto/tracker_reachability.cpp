// TrackerCore reachability: the probe at join (the driver dials the peer's registered address
// back; the core decides when, how many at once, and what no answer means), the measurement in
// the view. What the measurement means for a group: tracker_relays.cpp.

#include <fmt/format.h>

#include <algorithm>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {
namespace {

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void TrackerCore::measure_reachability(TimePoint now, const PeerKey& peer, bool rejoin,
                                       const std::string& previous_address) {
  MemberRecord& m = members_.at(peer);
  const bool queued =
      std::find(probe_queue_.begin(), probe_queue_.end(), peer) != probe_queue_.end();
  if (rejoin && previous_address == m.member.address &&
      (m.member.reachability != Reachability::unmeasured || probing_.contains(peer) || queued))
    return;  // measured, or being measured, at this address
  m.member.reachability = Reachability::unmeasured;
  probing_.erase(peer);
  std::erase(probe_queue_, peer);
  if (const auto last = probed_.find(peer);
      last != probed_.end() && now < last->second.at + config_.probe_interval) {
    if (last->second.address == m.member.address &&
        last->second.found != Reachability::unmeasured) {
      set_reachability(now, peer, last->second.found,
                       fmt::format("as its probe at this address found {} s ago",
                                   seconds(now - last->second.at)));
      return;
    }
    ++counters_.probes_unreached;
    set_reachability(now, peer, Reachability::unreachable,
                     fmt::format("not probed: its key was probed less than {} s ago",
                                 seconds(config_.probe_interval)));
    return;
  }
  probe_queue_.push_back(peer);
  start_probes(now);
}

void TrackerCore::start_probes(TimePoint now) {
  while (probing_.size() < config_.max_probes && !probe_queue_.empty()) {
    const PeerKey peer = probe_queue_.front();
    probe_queue_.pop_front();
    const std::string& address = members_.at(peer).member.address;  // leavers are taken out
    if (probed_.size() >= kMaxBarred)
      std::erase_if(probed_, [&](const auto& entry) {
        return entry.second.at + config_.probe_interval <= now;
      });
    if (probed_.size() >= kMaxBarred) probed_.erase(probed_.begin());
    probed_[peer] = ProbeRecord{.at = now, .address = address, .found = {}};
    probing_[peer] = now + config_.probe_timeout;
    probes_out_.push_back(Probe{.peer = peer, .address = address});
  }
}

std::optional<Probe> TrackerCore::poll_probe() {
  if (probes_out_.empty()) return std::nullopt;
  Probe p = std::move(probes_out_.front());
  probes_out_.pop_front();
  return p;
}

void TrackerCore::on_probe_result(TimePoint now, const PeerKey& peer, const std::string& address,
                                  bool reached) {
  latest_now_ = std::max(latest_now_, now);
  const auto it = probing_.find(peer);
  const auto m = members_.find(peer);
  if (it == probing_.end() || m == members_.end() || m->second.member.address != address) return;
  probing_.erase(it);
  probe_found(
      now, peer, reached ? Reachability::reachable : Reachability::unreachable,
      reached ? "the tracker connected to it there" : "the tracker could not connect to it there");
  start_probes(now);
  on_timer(now);
}

void TrackerCore::probe_timer(TimePoint now) {
  while (!probing_.empty()) {
    const auto due =
        std::min_element(probing_.begin(), probing_.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (due->second > now) break;
    const PeerKey peer = due->first;
    probing_.erase(due);
    probe_found(now, peer, Reachability::unreachable,
                fmt::format("it did not answer the tracker's probe within {} s",
                            seconds(config_.probe_timeout)));
  }
  start_probes(now);
}

TimePoint TrackerCore::probe_deadline() const {
  TimePoint next = kNever;
  for (const auto& [peer, deadline] : probing_) next = std::min(next, deadline);
  return next;
}

void TrackerCore::probe_found(TimePoint now, const PeerKey& peer, Reachability reach,
                              const std::string& why) {
  if (const auto record = probed_.find(peer); record != probed_.end()) record->second.found = reach;
  ++(reach == Reachability::reachable ? counters_.probes_reached : counters_.probes_unreached);
  set_reachability(now, peer, reach, why);
}

void TrackerCore::set_reachability(TimePoint now, const PeerKey& peer, Reachability reach,
                                   const std::string& why) {
  MemberRecord& m = members_.at(peer);
  const bool changed = m.member.reachability != reach;
  m.member.reachability = reach;
  if (reach == Reachability::reachable) {
    event(TrackerEvent::Kind::notice, peer,
          fmt::format("reachable at {}: {}", m.member.address, why));
  } else {
    event(TrackerEvent::Kind::notice, peer,
          fmt::format("not reachable from the internet at {}: {}; it dials the reachable members "
                      "itself, and its links with other unreachable members go through a relay",
                      m.member.address, why));
  }
  if (changed) membership_changed(now);
}

}  // namespace loco::proto
