// TrackerCore reachability: the probe at join (the driver dials the peer's registered address
// back; the core decides when, how many at once, and what no answer means), the measurement in
// the view. What the measurement means for a group: tracker_relays.cpp.

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "loco/proto/tracker_core.hpp"

namespace loco::proto {
namespace {

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

// Keeps the starts of the last `keep` probes within `interval` of `now` (oldest first).
void prune(std::deque<TimePoint>& starts, TimePoint now, Duration interval, std::size_t keep) {
  while (!starts.empty() && (starts.front() + interval <= now || starts.size() > keep))
    starts.pop_front();
}

// Makes room for one more entry in a map bounded at `max` entries: those whose last probe is older
// than the interval go first, then the first by key.
template <typename Map, typename StartsOf>
void make_room(Map& map, std::size_t max, TimePoint now, Duration interval, StartsOf starts_of) {
  if (map.size() < max) return;
  std::erase_if(map, [&](const auto& entry) {
    const std::deque<TimePoint>& starts = starts_of(entry.second);
    return starts.empty() || starts.back() + interval <= now;
  });
  if (map.size() >= max) map.erase(map.begin());
}

}  // namespace

void TrackerCore::measure_reachability(TimePoint now, const PeerKey& peer) {
  MemberRecord& m = members_.at(peer);
  probing_.erase(peer);  // a result of an earlier join's probe is ignored
  std::erase(probe_queue_, peer);
  probe_waiting_.erase(peer);
  const auto last = probed_.find(peer);
  m.member.reachability = last != probed_.end() && last->second.address == m.member.address
                              ? last->second.found
                              : Reachability::unmeasured;
  probe_queue_.push_back(peer);
  start_probes(now);
}

void TrackerCore::start_probes(TimePoint now) {
  while (probing_.size() < config_.max_probes && !probe_queue_.empty()) {
    const PeerKey peer = probe_queue_.front();
    probe_queue_.pop_front();
    const std::string& address = members_.at(peer).member.address;  // leavers are taken out
    if (const TimePoint at = probe_allowed_at(now, peer, address); at > now) {
      probe_waiting_[peer] = at;
      event(TrackerEvent::Kind::notice, peer,
            fmt::format("not probed yet at {}: its key or that address was probed {} times in the "
                        "last {} s; probed in {} s, {} until then",
                        address, config_.probes_per_interval, seconds(config_.probe_interval),
                        seconds(at - now),
                        members_.at(peer).member.reachability == Reachability::unmeasured
                            ? "not measured"
                            : "listed as its last probe there found"));
      continue;
    }
    count_probe(now, peer, address);
    probing_[peer] = now + config_.probe_timeout;
    probes_out_.push_back(Probe{.peer = peer, .address = address});
  }
}

TimePoint TrackerCore::probe_allowed_at(TimePoint now, const PeerKey& peer,
                                        const std::string& address) {
  const std::size_t per_interval = std::max<std::uint32_t>(config_.probes_per_interval, 1);
  TimePoint at = now;
  const auto after = [&](std::deque<TimePoint>& starts) {
    prune(starts, now, config_.probe_interval, per_interval);
    if (starts.size() >= per_interval) at = std::max(at, starts.front() + config_.probe_interval);
  };
  if (const auto key = probed_.find(peer); key != probed_.end()) after(key->second.starts);
  if (const auto addr = address_probes_.find(address); addr != address_probes_.end())
    after(addr->second);
  return at;
}

void TrackerCore::count_probe(TimePoint now, const PeerKey& peer, const std::string& address) {
  const std::size_t per_interval = std::max<std::uint32_t>(config_.probes_per_interval, 1);
  const auto add = [&](std::deque<TimePoint>& starts) {
    starts.push_back(now);
    prune(starts, now, config_.probe_interval, per_interval);
  };
  if (!probed_.contains(peer))
    make_room(probed_, kMaxBarred, now, config_.probe_interval,
              [](const ProbeRecord& r) -> const ProbeStarts& { return r.starts; });
  ProbeRecord& record = probed_[peer];
  record.address = address;
  record.found = Reachability::unmeasured;
  add(record.starts);
  if (!address_probes_.contains(address))
    make_room(address_probes_, kMaxBarred, now, config_.probe_interval,
              [](const ProbeStarts& starts) -> const ProbeStarts& { return starts; });
  add(address_probes_[address]);
}

std::optional<Probe> TrackerCore::poll_probe() {
  if (probes_out_.empty()) return std::nullopt;
  Probe p = std::move(probes_out_.front());
  probes_out_.pop_front();
  return p;
}

void TrackerCore::on_probe_result(TimePoint now, const PeerKey& peer, const std::string& address,
                                  bool reached) {
  quorum_memo_.reset();
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
  for (auto it = probe_waiting_.begin(); it != probe_waiting_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    probe_queue_.push_back(it->first);
    it = probe_waiting_.erase(it);
  }
  start_probes(now);
}

TimePoint TrackerCore::probe_deadline() const {
  TimePoint next = kNever;
  for (const auto& [peer, deadline] : probing_) next = std::min(next, deadline);
  for (const auto& [peer, at] : probe_waiting_) next = std::min(next, at);
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
