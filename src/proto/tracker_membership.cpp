// TrackerCore membership: joins (admission, settings, genesis), heartbeats, leaving and eviction,
// epochs and the signed views.

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "loco/proto/admission.hpp"
#include "loco/proto/tracker_core.hpp"
#include "loco/proto/view_delta.hpp"

namespace loco::proto {

void TrackerCore::handle_join(TimePoint now, const PeerKey& from, const JoinRequest& request) {
  if (auto refusal = join_refusal(now, from, request)) {
    ++counters_.peers_refused;
    send(from, JoinReply{.accepted = false, .refusal = *refusal});
    event(TrackerEvent::Kind::refused, from, *refusal, true);
    return;
  }
  const bool rejoin = members_.contains(from);
  if (rejoin && in_attempt(from))
    abort_attempt(now, fmt::format("{} joined again mid-round", secure::short_id(from)), {from});
  MemberRecord& m = members_[from];
  if (!rejoin) {
    const auto free = std::find(shard_taken_.begin(), shard_taken_.end(), false);
    m.owns_shard = free != shard_taken_.end();  // else the run is over (join_refusal)
    m.member.shard =
        m.owns_shard ? static_cast<std::uint32_t>(free - shard_taken_.begin()) : std::uint32_t{0};
    if (m.owns_shard) shard_taken_[m.member.shard] = true;
    m.joined = now;
    ++counters_.peers_joined;
  }
  // Gossip mode: a peer that joins again is listed anew from a round to come (stamped with the
  // view that lists it, stamp_admitted_members); its earlier entry stays on the rosters of the
  // rounds before. The tracker cannot tell a restarted process from one whose link dropped: either
  // way its groups of the rounds in between go alone.
  m.member.first_round = 0;
  m.member.key = from;
  if (const auto network = networks_.find(from); network != networks_.end())
    m.network = network->second;
  m.member.address = request.listen_address;
  m.member.upload_bps = request.upload_bps;
  m.relay_pairs = request.relay_pairs;
  m.state_round = request.state_round;
  m.state_hash = request.state_hash;
  if (config_.gossip) gossip_state_reported(request.state_round);
  m.resyncing = false;
  m.catch_up_wait = false;
  heard_from(from, now);
  rejoined_after_restart(from);
  ready_.erase(from);

  // A restarted tracker may be behind its peers: settle on their state before telling this one
  // what the run's state is.
  if (request.state_round > committed_round_ && !someone_in_sync()) reconcile(now);
  const auto millis = [](Duration d) {
    return static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  send(from, JoinReply{.accepted = true,
                       .refusal = {},
                       .shard_index = m.member.shard,
                       .shard_count = config_.shard_count,
                       .heartbeat_ms = millis(config_.heartbeat_interval),
                       .eviction_ms = millis(config_.eviction_timeout),
                       .committed_round = committed_round_,
                       .committed_hash = committed_hash_,
                       .final_round = config_.final_round,
                       .phase_ms = phase_ms()});
  event(TrackerEvent::Kind::joined, from,
        fmt::format("{} at {} (shard {}, state of round {})", rejoin ? "joined again" : "joined",
                    request.listen_address, m.member.shard, request.state_round));
  membership_changed(now);
  measure_reachability(now, from);
  // The newcomer gets the full view with the next broadcast: at once (on_message's on_timer)
  // unless one went out less than view_interval ago, so a burst of joins costs one full view,
  // not one per join.
  newcomers_.insert(from);
  if (config_.gossip) {
    catch_up_if_behind(now, from);
    return;
  }
  if (!in_sync(m) && computed_committed(request)) commit_tentative(from);
  if (in_sync(m))
    tell_run_ended(from);
  else
    send_resync(now, from);
}

std::optional<std::string> TrackerCore::join_refusal(TimePoint now, const PeerKey& from,
                                                     const JoinRequest& request) {
  if (const auto it = barred_.find(from); it != barred_.end() && it->second > now)
    return fmt::format("this peer was cut off for breaking the protocol and may join again in {} s",
                       std::chrono::duration_cast<std::chrono::seconds>(it->second - now).count());
  if (auto refusal = admission_refusal(config_.admission, from, request.credential)) return refusal;
  if (auto refusal = settings_refusal(config_.settings, request.settings))
    return fmt::format("{} (this peer runs {})", *refusal, request.software);
  if (request.genesis != config_.genesis)
    return fmt::format(
        "this peer's initial state has hash {}, the run's has {}: same settings but "
        "another initialisation (another loco release or build?)",
        to_hex(request.genesis), to_hex(config_.genesis));
  const auto network = networks_.find(from);
  if (!members_.contains(from) && config_.max_members_per_network > 0 &&
      network != networks_.end() && !network->second.empty() &&
      static_cast<std::size_t>(std::count_if(members_.begin(), members_.end(), [&](const auto& m) {
        return m.second.network == network->second;
      })) >= config_.max_members_per_network)
    return fmt::format("the run admits at most {} peers from one network, and {} already has them",
                       config_.max_members_per_network, network->second);
  if (config_.gossip && !members_.empty() && request.state_round > newest_plausible_round(now))
    return fmt::format("this peer's state is of round {}, past the run's round {}",
                       request.state_round, newest_plausible_round(now));
  // After the end nobody trains: members that stay to serve the model keep their shards, and a
  // newcomer (to fetch the model) needs none.
  if (!members_.contains(from) && !run_over() &&
      std::find(shard_taken_.begin(), shard_taken_.end(), false) == shard_taken_.end())
    return fmt::format("the run is full: all {} data shards are taken; try again later",
                       config_.shard_count);
  return end_refusal(request);
}

void TrackerCore::handle_heartbeat(TimePoint now, const PeerKey& from, const Heartbeat& heartbeat) {
  members_.at(from).stats = heartbeat;
  send(from, HeartbeatAck{.epoch = epoch_,
                          .next_round = config_.gossip ? gossip_next_round(now) : next_round()});
}

void TrackerCore::heard_from(const PeerKey& peer, TimePoint now) {
  MemberRecord& m = members_.at(peer);
  silence_deadlines_.erase({m.last_seen + config_.eviction_timeout, peer});
  m.last_seen = now;
  silence_deadlines_.insert({now + config_.eviction_timeout, peer});
}

void TrackerCore::remove_member(TimePoint now, const PeerKey& peer, TrackerEvent::Kind kind,
                                const std::string& why, bool disconnect) {
  const auto it = members_.find(peer);
  if (it == members_.end()) return;
  silence_deadlines_.erase({it->second.last_seen + config_.eviction_timeout, peer});
  probing_.erase(peer);            // a late result is ignored
  std::erase(probe_queue_, peer);  // the queue holds members only: at most shard_count
  probe_waiting_.erase(peer);      // as does this
  if (it->second.owns_shard) shard_taken_[it->second.member.shard] = false;
  members_.erase(it);
  ready_.erase(peer);
  event(kind, peer, why, disconnect);
  if (in_attempt(peer))
    abort_attempt(now, fmt::format("{} left the group: {}", secure::short_id(peer), why), {peer});
  // An accused member that leaves settles its accusation: nothing more to wait for.
  if (pending_retry_ && pending_retry_->accusations.contains(peer) &&
      pending_retry_->accusations.size() == 1)
    settle_accusation(now);
  membership_changed(now);
  // The last holder of the run's state left: give it time to come back before the run settles on
  // an older state (reconcile()).
  if (!someone_in_sync())
    reconcile_after_ = std::max(reconcile_after_, now + config_.eviction_timeout);
}

void TrackerCore::bar(TimePoint now, const PeerKey& peer) {
  if (barred_.size() >= kMaxBarred)
    std::erase_if(barred_, [&](const auto& entry) { return entry.second <= now; });
  if (barred_.size() >= kMaxBarred)
    barred_.erase(
        std::min_element(barred_.begin(), barred_.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; }));
  barred_[peer] = now + config_.bar_time;
}

void TrackerCore::evict_silent(TimePoint now) {
  while (!silence_deadlines_.empty() && silence_deadlines_.begin()->first <= now) {
    const PeerKey peer = silence_deadlines_.begin()->second;
    ++counters_.peers_evicted;
    remove_member(now, peer, TrackerEvent::Kind::left,
                  fmt::format("evicted: silent for {} s",
                              std::chrono::duration<double>(config_.eviction_timeout).count()),
                  true);
  }
}

void TrackerCore::forgive_own_stall(TimePoint now) {
  if (config_.stall_grace <= Duration::zero() || silence_deadlines_.empty() ||
      silence_deadlines_.begin()->first + config_.stall_grace >= now)
    return;
  const Duration late = now - silence_deadlines_.begin()->first;
  const TimePoint until = now + config_.heartbeat_interval;
  std::size_t forgiven = 0;
  while (!silence_deadlines_.empty() && silence_deadlines_.begin()->first < until) {
    const PeerKey peer = silence_deadlines_.begin()->second;
    silence_deadlines_.erase(silence_deadlines_.begin());
    silence_deadlines_.insert({until, peer});
    members_.at(peer).last_seen = until - config_.eviction_timeout;  // heard_from's key
    ++forgiven;
  }
  event(TrackerEvent::Kind::notice, std::nullopt,
        fmt::format("the tracker itself was stalled (an input came {:.1f} s after a deadline): {} "
                    "members due for eviction get {} s more to be heard",
                    std::chrono::duration<double>(late).count(), forgiven,
                    std::chrono::duration<double>(config_.heartbeat_interval).count()));
}

// Epochs are not saved on every change (a flood of joins would mean a flood of fsyncs): a
// restarted tracker continues far above the last saved epoch instead (see the constructor).
void TrackerCore::membership_changed(TimePoint /*now*/) {
  ++epoch_;
  view_dirty_ = true;
}

void TrackerCore::flush_view(TimePoint now) {
  if (config_.gossip) stamp_admitted_members();
  View current = view();
  // One delta for every member that holds the last broadcast: encoded and signed once.
  std::shared_ptr<const std::vector<std::byte>> delta;
  if (broadcast_.epoch != 0) {
    const MembersDigest digest = MembersDigest::of(current.members);
    ViewDelta changes = view_delta(broadcast_, current, digest);
    if (config_.gossip && !changes.removed.empty())
      changes.removed_from_round = gossip_change_round();
    delta = std::make_shared<const std::vector<std::byte>>(
        encode_signed_view_delta(changes, identity_, config_.run_id));
  }
  broadcast_ = std::move(current);
  broadcast_full_.reset();
  for (const auto& [key, m] : members_) {
    const bool full = delta == nullptr || newcomers_.contains(key);
    transmits_.push_back(Transmit{.to = key,
                                  .type = full ? MessageType::view : MessageType::view_delta,
                                  .body = full ? broadcast_body() : delta});
  }
  newcomers_.clear();
  view_dirty_ = false;
  view_sent_at_ = now;
}

TimePoint TrackerCore::next_view_at() const {
  Duration spacing = config_.view_interval;
  if (config_.view_send_rate > 0)
    spacing =
        std::max(spacing, std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
                              static_cast<double>(members_.size()) / config_.view_send_rate)));
  return view_sent_at_ + spacing;
}

std::shared_ptr<const std::vector<std::byte>> TrackerCore::broadcast_body() {
  if (broadcast_full_ == nullptr)
    broadcast_full_ = std::make_shared<const std::vector<std::byte>>(
        encode_signed_view(broadcast_, identity_, config_.run_id));
  return broadcast_full_;
}

View TrackerCore::view() const {
  View v{.epoch = epoch_, .members = {}};
  v.members.reserve(members_.size());
  for (const auto& [key, m] : members_) v.members.push_back(m.member);
  return v;
}

}  // namespace loco::proto
