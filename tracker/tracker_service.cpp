#include "tracker_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "heap_usage.hpp"
#include "loco/checkpoint/atomic_file.hpp"
#include "loco/core/error.hpp"
#include "loco/net/stripe_layout.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::tracker {
namespace {

// What a peer may send the tracker, and how large: the protocol table's limits.
std::optional<std::uint64_t> peer_message_limit(std::uint16_t type) {
  const auto info = proto::message_info(type);
  if (!info || info->route != proto::Route::peer_to_tracker) return std::nullopt;
  return info->max_bytes;
}

// One save, on whichever thread runs it. An Error is not a refusal: the run goes on and a restart
// falls back to the last state saved (StateStore::save).
bool save_to(StateStore& store, const proto::TrackerSnapshot& state) {
  try {
    return store.save(state);
  } catch (const Error& e) {
    spdlog::error("cannot save the tracker's state to {}: {}", store.where(), e.what());
    return true;
  }
}

}  // namespace

TrackerService::TrackerService(boost::asio::io_context& io,
                               const boost::asio::ip::tcp::endpoint& endpoint,
                               net::BundleListenerConfig listener,
                               std::unique_ptr<proto::TrackerCore> core,
                               std::unique_ptr<StateStore> state,
                               std::unique_ptr<CustodyStore> custody, BufferCaps caps,
                               StoreThread* store_thread)
    : io_(io),
      core_(std::move(core)),
      probes_(io, listener.setup, core_->config().probe_timeout,
              [this](const proto::Probe& probe, bool reached, const std::string& why) {
                spdlog::debug("reachability probe of peer {} at {}: {}",
                              secure::short_id(probe.peer), probe.address, why);
                if (stopping_) return;
                core_->on_probe_result(steady_now(), probe.peer, probe.address, reached);
                drive();
              }),
      timer_(io),
      trim_timer_(io),
      join_timer_(io),
      send_timer_(io),
      warnings_(io,
                net::RefusalTally(std::chrono::seconds(10), 8, 1,
                                  net::RefusalTally::Wording{.verb = "saw", .noun = "warnings"}),
                spdlog::level::warn),
      about_peers_(io,
                   net::RefusalTally(std::chrono::seconds(10), 8, 4,
                                     net::RefusalTally::Wording{.verb = "saw", .noun = "events"}),
                   spdlog::level::info),
      state_(std::move(state)),
      store_thread_(store_thread),
      custody_(std::move(custody)),
      caps_(caps),
      outbox_(kSendBudgetBytes, kSendHoldLimit, [this] { send_later(); }),
      held_([this](HeldUntilSaved::Version version,
                   proto::TrackerSnapshot snapshot) { start_save(version, std::move(snapshot)); },
            [this](proto::Transmit transmit) { outbox_.push(std::move(transmit)); }) {
  core_->set_wall_clock(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count() -
      std::chrono::duration_cast<std::chrono::milliseconds>(steady_now().time_since_epoch())
          .count());
  listener_ = net::BundleListener::create(
      io, endpoint, std::move(listener),
      [this](const std::shared_ptr<net::StreamBundle>& bundle, const std::string& source) {
        return admit(bundle, source);
      });
}

void TrackerService::start() {
  if (custody_)
    if (auto newest = custody_->take_newest())
      core_->set_custody(std::move(newest->manifest),
                         std::make_shared<const std::vector<std::byte>>(std::move(newest->state)));
  listener_->start();
  if (state_) held_.changed(core_->snapshot());  // a new run's state exists from the start
  if (held_.failed()) return depose();
  drive();
}

void TrackerService::depose() {
  if (deposed_) return;
  deposed_ = true;
  // Saved before, but this replica speaks no more: the next leader will. What waits for a save
  // is never released (on_saved does nothing now).
  outbox_.clear();
  spdlog::error("no longer the leading replica: forming no more rounds");
  if (on_deposed_) on_deposed_();
}

void TrackerService::stop(std::function<void()> on_idle) {
  stopping_ = true;
  on_idle_ = std::move(on_idle);
  listener_->stop();
  probes_.stop();
  timer_.cancel();
  timer_deadline_ = kNever;
  trim_timer_.cancel();
  join_timer_.cancel();
  send_timer_.cancel();
  warnings_.flush();
  about_peers_.flush();
  outbox_.clear();
  for (auto& [key, bundle] : detached_) bundle->close();
  detached_.clear();
  for (auto& [key, peer] : peers_) peer.bundle->close();
  if (peers_.empty()) on_idle_();
}

net::BundleHandlers TrackerService::admit(const std::shared_ptr<net::StreamBundle>& bundle,
                                          const std::string& source) {
  const std::weak_ptr<net::StreamBundle> weak = bundle;
  return net::BundleHandlers{
      .on_ready =
          [this, weak, source] {
            if (auto b = weak.lock()) on_ready(b, source);
          },
      .on_chunk =
          [this, weak](const net::BundleChunk& piece) {
            if (auto b = weak.lock()) on_piece(b, piece);
          },
      .on_closed =
          [this, weak](const Error* error) {
            if (auto b = weak.lock()) on_closed(b, error);
          },
  };
}

void TrackerService::on_ready(const std::shared_ptr<net::StreamBundle>& bundle,
                              const std::string& source) {
  if (stopping_) {
    bundle->close();
    return;
  }
  const proto::PeerKey key = bundle->peer_identity();
  const auto it = peers_.find(key);
  if (it != peers_.end()) {
    spdlog::info("{} connected again: its old connection is closed", bundle->peer_name());
    const auto old = std::move(it->second.bundle);
    peers_.erase(it);
    old->close();  // no longer current: its end is not a disconnect
  }
  relaying_.erase(key);
  if (auto cut = detached_.extract(key)) cut.mapped()->close();  // the peer moved on
  peers_.emplace(key, Peer{.bundle = bundle,
                           .assembler = net::MessageAssembler(peer_message_limit, caps_.joining),
                           .connected = steady_now()});
  limit(key, caps_.joining);
  core_->on_connected(key, source);
  joining_.emplace(steady_now() + caps_.join_deadline, key, bundle);
  arm_join_deadline();
}

void TrackerService::arm_join_deadline() {
  if (join_armed_ || joining_.empty() || stopping_) return;
  join_armed_ = true;
  join_timer_.expires_at(to_steady(std::get<0>(*joining_.begin())));
  join_timer_.async_wait([this](const boost::system::error_code& error) {
    join_armed_ = false;
    if (!error && !stopping_) close_late_joiners();
  });
}

void TrackerService::close_late_joiners() {
  const TimePoint now = steady_now();
  while (!joining_.empty() && std::get<0>(*joining_.begin()) <= now) {
    const auto [deadline, key, bundle] = *joining_.begin();
    joining_.erase(joining_.begin());
    if (!is_current(bundle) || core_->has_member(key)) continue;
    warnings_.add(
        bundle->peer_name(), "did not join in time",
        fmt::format("{}: closed: it did not join within {} s", bundle->peer_name(),
                    std::chrono::duration_cast<std::chrono::seconds>(caps_.join_deadline).count()));
    cut_off(key);
  }
  drive();
  arm_join_deadline();
}

void TrackerService::cut_off(const proto::PeerKey& key) {
  const auto it = peers_.find(key);
  if (it == peers_.end()) return;
  log_cut_off(it->second);
  const std::shared_ptr<net::StreamBundle> bundle = std::move(it->second.bundle);
  peers_.erase(it);
  relaying_.erase(key);
  // No longer current, so nothing more it sends is read. What waits for it in the outbox is of
  // no use to it but its replies (a refused join's reason): the rest is dropped, and it is closed
  // once those are out (released by a save, if they wait for one), not after a backlog of
  // messages to others.
  outbox_.drop(key);
  held_.drop(key);
  if (!outbox_.holds(key) && !held_.holds(key)) {
    bundle->close();
  } else {
    if (auto earlier = detached_.extract(key)) earlier.mapped()->close();
    detached_.emplace(key, bundle);
  }
  core_->on_disconnect(steady_now(), key);
}

// Where a member's messages stopped before it was cut off (evicted for silence, say): its socket
// not read for long (the tracker did not get to it, or nothing came), read but no whole message
// (a frame or message half received), or messages but no heartbeat. Measured this way in the
// tracker-load benchmark (docs/TRACKER.md, "Load").
void TrackerService::log_cut_off(const Peer& peer) const {
  if (!spdlog::should_log(spdlog::level::debug)) return;
  const TimePoint now = steady_now();
  const auto ago = [&](TimePoint t) {
    return t == TimePoint{}
               ? std::string("never")
               : fmt::format("{:.1f} s ago", std::chrono::duration<double>(now - t).count());
  };
  const net::Connection::ReadCounters reads = peer.bundle->read_counters();
  spdlog::debug(
      "{} cut off, connected {}: {} reads ({} bytes, the last {}), {} messages (the last {}), {} "
      "heartbeats (the last {}), {} bytes queued to it",
      peer.bundle->peer_name(), ago(peer.connected), reads.reads, reads.bytes, ago(reads.last),
      peer.messages, ago(peer.last_message), peer.heartbeats, ago(peer.last_heartbeat),
      peer.bundle->queued_bytes());
}

void TrackerService::limit(const proto::PeerKey& key, std::uint64_t cap) {
  const auto it = peers_.find(key);
  if (it == peers_.end()) return;
  it->second.assembler.set_max_buffered(cap);
  // One stream: a frame carries at most a whole message and its stripe header.
  const std::uint64_t frame = cap + net::kStripeHeaderBytes;
  it->second.bundle->limit_incoming(static_cast<std::uint32_t>(frame), frame);
}

// A custody pull or serve exchanges state chunks on the tracker link: the peer's connection may
// hold a whole chunk while the exchange lasts (kRelayHold after the tracker's last relay to it).
void TrackerService::widen_for_relay(const proto::PeerKey& key) {
  const auto [it, first] = relaying_.insert_or_assign(key, steady_now() + kRelayHold);
  if (first)
    limit(key, std::max(caps_.member, *peer_message_limit(static_cast<std::uint16_t>(
                                          proto::MessageType::state_to_tracker))));
}

void TrackerService::narrow_finished_relays() {
  const TimePoint t = steady_now();
  for (auto it = relaying_.begin(); it != relaying_.end();) {
    if (it->second > t) {
      ++it;
      continue;
    }
    limit(it->first, caps_.member);
    it = relaying_.erase(it);
  }
}

void TrackerService::trim_soon() {
#if defined(__GLIBC__)
  if (trim_armed_) return;
  trim_armed_ = true;
  trim_timer_.expires_after(kTrimInterval);
  trim_timer_.async_wait([this](const boost::system::error_code& error) {
    trim_armed_ = false;
    if (!error) ::malloc_trim(0);
  });
#endif
}

void TrackerService::on_piece(const std::shared_ptr<net::StreamBundle>& bundle,
                              const net::BundleChunk& piece) {
  if (!is_current(bundle)) return;
  const proto::PeerKey key = bundle->peer_identity();
  // A message over its limit throws: the connection fails with that error (net::Connection).
  Peer& peer = peers_.at(key);
  auto whole = peer.assembler.add(piece);
  if (!whole) return;
  const TimePoint now = steady_now();
  ++peer.messages;
  peer.last_message = now;
  if (whole->type == static_cast<std::uint16_t>(proto::MessageType::heartbeat)) {
    ++peer.heartbeats;
    peer.last_heartbeat = now;
  }
  core_->on_message(now, key, whole->type, whole->bytes);
  drive();
}

void TrackerService::on_closed(const std::shared_ptr<net::StreamBundle>& bundle,
                               const Error* error) {
  trim_soon();
  if (!is_current(bundle)) return;
  const proto::PeerKey key = bundle->peer_identity();
  peers_.erase(key);
  if (error != nullptr) spdlog::info("{}: {}", bundle->peer_name(), error->what());
  if (stopping_) {
    if (peers_.empty()) on_idle_();
    return;
  }
  core_->on_disconnect(steady_now(), key);
  drive();
}

bool TrackerService::is_current(const std::shared_ptr<net::StreamBundle>& bundle) const {
  if (!bundle->ready()) return false;
  const auto it = peers_.find(bundle->peer_identity());
  return it != peers_.end() && it->second.bundle == bundle;
}

void TrackerService::drive() {
  if (deposed_) return;
  std::vector<proto::PeerKey> to_close;
  // First: a copy handed back to the core may make it say more (the run's final state is kept).
  while (auto copy = core_->poll_custody()) keep_custody(std::move(*copy));
  while (auto probe = core_->poll_probe()) probes_.start(*probe);
  bool changed = false;
  while (auto event = core_->poll_event()) {
    changed = changed || event->kind == proto::TrackerEvent::Kind::state_changed;
    if (event->disconnect && event->peer) to_close.push_back(*event->peer);
    // A member's connection may hold less (a member leaves or is evicted with its connection).
    if (event->kind == proto::TrackerEvent::Kind::joined) limit(*event->peer, caps_.member);
    log(*event);
  }
  // One snapshot for the turn's changes (the core's state now); announced only once saved: what
  // the core sends from now on waits for it, and a failed save deposes the service unsent.
  if (changed && state_) held_.changed(core_->snapshot());
  if (held_.failed()) return depose();
  narrow_finished_relays();
  while (auto transmit = core_->poll_transmit()) held_.send(std::move(*transmit));
  // Before sending: what was just queued for a peer cut off is dropped with the rest (cut_off).
  for (const proto::PeerKey& key : to_close) cut_off(key);
  // One batch per turn of the loop: while a broadcast drains, each heartbeat read must not hand
  // on another batch of it (the continuation is posted whenever the outbox is not empty).
  if (!send_posted_) send_some();
  if (!to_close.empty()) {
    drive();  // the core's answer to the disconnects
    return;
  }
  arm_timer();
}

void TrackerService::arm_timer() {
  const TimePoint deadline = stopping_ ? kNever : core_->poll_timeout();
  // Most messages (a heartbeat) leave the deadline where it was: the wait already set stands.
  if (deadline == timer_deadline_) return;
  timer_deadline_ = deadline;
  if (deadline == kNever) {
    timer_.cancel();
    return;
  }
  timer_.expires_at(to_steady(deadline));
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopping_) return;
    timer_deadline_ = kNever;  // none set now
    core_->on_timer(steady_now());
    drive();
  });
}

void TrackerService::send_some() {
  const TimePoint now = steady_now();
  for (std::size_t n = 0; n < kTransmitsPerTurn; ++n) {
    auto out = outbox_.pop(now);
    if (!out) break;  // empty, or the rest waits for the budget: a hold dropped calls send_later
    const proto::Transmit& transmit = out->transmit;
    const auto bundle = connection_of(transmit.to);
    if (bundle == nullptr) continue;  // gone meanwhile
    if (transmit.type == proto::MessageType::state_to_peer) widen_for_relay(transmit.to);
    // The body is shared by every recipient of a broadcast; both live until the connection has
    // taken the message (or ended): then the hold gives its bytes back to the budget.
    auto keep = [body = transmit.body, hold = std::move(out->hold)] {};
    const auto type = static_cast<std::uint16_t>(transmit.type);
    if (SendQueue::is_reply(transmit.type)) {
      bundle->send_ahead(type, *transmit.body, std::move(keep));
    } else {
      bundle->send(type, *transmit.body, std::move(keep));
    }
  }
  std::erase_if(detached_, [&](const auto& cut) {
    if (outbox_.holds(cut.first) || held_.holds(cut.first)) return false;
    cut.second->close();
    return true;
  });
  if (outbox_.empty()) return;
  if (outbox_.ready(now)) return send_later();
  // Held by the budget: a hold its connection gives back calls send_later at once; one whose
  // time runs out is only seen by the next pop, so wake for that.
  const TimePoint expiry = outbox_.next_expiry();
  if (expiry == kNever) return;
  send_timer_.expires_at(to_steady(expiry));
  send_timer_.async_wait([this](const boost::system::error_code& error) {
    if (!error) send_later();
  });
}

void TrackerService::send_later() {
  if (send_posted_ || stopping_ || deposed_) return;
  send_posted_ = true;
  boost::asio::post(io_, [this] {
    send_posted_ = false;
    if (!stopping_ && !deposed_) send_some();
  });
}

std::shared_ptr<net::StreamBundle> TrackerService::connection_of(const proto::PeerKey& key) const {
  if (const auto cut = detached_.find(key); cut != detached_.end()) return cut->second;
  const auto it = peers_.find(key);
  return it != peers_.end() ? it->second.bundle : nullptr;
}

void TrackerService::log(const proto::TrackerEvent& event) {
  const std::string source = event.peer ? "peer " + secure::short_id(*event.peer) : "a peer";
  const std::string text = event.peer ? source + ": " + event.text : event.text;
  using Kind = proto::TrackerEvent::Kind;
  switch (event.kind) {
    case Kind::misbehaved: warnings_.add(source, "misbehaved", text); break;
    case Kind::refused: warnings_.add(source, "refused", text); break;
    case Kind::reported: warnings_.add(source, "reports of others", text); break;
    case Kind::joined: about_peers_.add(source, "joined", text); break;
    case Kind::left: about_peers_.add(source, "left", text); break;
    case Kind::notice:
      if (event.peer) {
        about_peers_.add(source, "notices", text);
      } else {
        spdlog::info("{}", text);
      }
      break;
    case Kind::state_changed: spdlog::debug("state saved: {}", event.text); break;
    default: spdlog::info("{}", text); break;
  }
}

void TrackerService::start_save(HeldUntilSaved::Version version, proto::TrackerSnapshot state) {
  if (store_thread_ == nullptr) return held_.finished(version, save_to(*state_, state));
  // The job holds the store and the loop, not the service: it may end after the service did (its
  // answer is then never run: the loop has stopped).
  store_thread_->post([store = state_, io = &io_, this, version, state = std::move(state)] {
    const bool saved = save_to(*store, state);
    boost::asio::post(*io, [this, version, saved] { on_saved(version, saved); });
  });
}

void TrackerService::on_saved(HeldUntilSaved::Version version, bool saved) {
  if (deposed_ || stopping_) return;
  held_.finished(version, saved);
  if (!saved) return depose();
  if (!send_posted_) send_some();
}

void TrackerService::keep_custody(proto::CustodyCopy copy) {
  const std::uint64_t round = copy.manifest.round;
  const std::string hash = to_hex(copy.manifest.state_hash()).substr(0, 12);
  if (custody_) {
    try {
      custody_->add(copy);
      spdlog::info("custody copy of round {} stored: state {}, {} copies in {}", round, hash,
                   custody_->entries().size(), custody_->folder().string());
    } catch (const Error& e) {
      // Still served from memory; on disk the older copies stay.
      spdlog::error("cannot store the custody copy of round {}: {}", round, e.what());
    }
  } else {
    spdlog::info("custody copy of round {} kept in memory: state {}", round, hash);
  }
  core_->set_custody(std::move(copy.manifest),
                     std::make_shared<const std::vector<std::byte>>(std::move(copy.state)));
}

proto::TrackerStatus TrackerService::status() const {
  proto::TrackerStatus s = core_->status(steady_now());
  s.heap_bytes = heap_in_use_bytes();
  return s;
}

}  // namespace loco::tracker
