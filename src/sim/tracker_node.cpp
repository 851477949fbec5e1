#include "loco/sim/tracker_node.hpp"

#include "loco/proto/message_type.hpp"
#include "loco/proto/tracker_snapshot.hpp"

namespace loco::sim {

TrackerNode::TrackerNode(EventLoop& loop, Network& network, NodeId node,
                         proto::TrackerCoreConfig config, const secure::KeyPair& identity,
                         const Directory& directory)
    : loop_(loop),
      network_(network),
      node_(node),
      config_(std::move(config)),
      identity_(identity),
      directory_(directory) {}

void TrackerNode::start() {
  std::optional<proto::TrackerSnapshot> restored;
  if (keeping_)
    restored = keeping_->load();
  else if (disk_)
    restored = proto::decode_snapshot(*disk_, "the simulated tracker's state");
  core_ =
      std::make_unique<proto::TrackerCore>(config_, identity_, std::move(restored), loop_.now());
  ++process_;
  timer_at_ = kNever;
  if (custody_manifest_) core_->set_custody(*custody_manifest_, custody_bytes_);
  network_.attach(node_, this);
  // A new run's state exists from the start (TrackerService::start()).
  if (save()) drive();
}

bool TrackerNode::deferred(std::function<void()> input) {
  if (loop_.now() >= paused_until_) return false;
  loop_.at(paused_until_, [this, process = process_, input = std::move(input)] {
    if (core_ && process == process_) input();
  });
  return true;
}

void TrackerNode::crash(bool notify) {
  core_.reset();
  connected_.clear();
  timer_at_ = kNever;
  network_.kill(node_, notify);
}

void TrackerNode::on_open(NodeId peer) {
  if (deferred([this, peer] { on_open(peer); })) return;
  connected_[peer] = true;  // a second connection from a key replaces the first, silently
}

void TrackerNode::on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) {
  if (!core_) return;
  if (deferred([this, from, type, copy = std::vector<std::byte>(body.begin(), body.end())] {
        on_message(from, type, copy);
      }))
    return;
  const auto info = proto::message_info(type);
  if (!info || info->route != proto::Route::peer_to_tracker || body.size() > info->max_bytes) {
    connected_.erase(from);  // the assembler's refusal fails the connection
    network_.close(node_, from);
    ++inputs_;
    core_->on_disconnect(loop_.now(), directory_.key(from));
    drive();
    return;
  }
  ++inputs_;
  core_->on_message(loop_.now(), directory_.key(from), type, body);
  drive();
}

void TrackerNode::on_close(NodeId peer, const std::string& why) {
  if (!core_ || deferred([this, peer, why] { on_close(peer, why); })) return;
  if (connected_.erase(peer) == 0) return;
  ++inputs_;
  core_->on_disconnect(loop_.now(), directory_.key(peer));
  drive();
}

void TrackerNode::drive() {
  std::vector<NodeId> to_close;
  // First: a copy handed back to the core may make it say more (the run's final state is kept).
  while (auto copy = core_->poll_custody()) keep_custody(std::move(*copy));
  while (auto event = core_->poll_event()) {
    // Announced only once saved: a refused save ends the process before anything goes out.
    if (event->kind == proto::TrackerEvent::Kind::state_changed && !save()) return;
    if (event->disconnect && event->peer && directory_.knows(*event->peer))
      to_close.push_back(directory_.node(*event->peer));
    if (observer_) observer_(*event);
  }
  while (auto probe = core_->poll_probe()) answer_probe(*probe);
  while (auto t = core_->poll_transmit()) {
    const NodeId to = directory_.node(t->to);
    if (!connected_.contains(to)) continue;  // gone meanwhile
    network_.send(node_, to, static_cast<std::uint16_t>(t->type), std::move(t->body));
  }
  for (const NodeId peer : to_close) {
    if (connected_.erase(peer) == 0) continue;
    network_.close(node_, peer);
  }
  arm_timer();
}

bool TrackerNode::save() {
  const proto::TrackerSnapshot snapshot = core_->snapshot();
  if (keeping_) {
    if (!keeping_->save(snapshot)) {
      crash(true);  // TrackerService::depose: its connections close, nothing more is sent
      if (keeping_->on_deposed) keeping_->on_deposed();
      return false;
    }
  } else {
    disk_ = proto::encode(snapshot);
  }
  committed_ = {snapshot.committed_round, snapshot.committed_hash};
  return true;
}

// As TrackerService::keep_custody: stored (here only the newest), then served by the core.
void TrackerNode::keep_custody(proto::CustodyCopy copy) {
  custody_held_ = {copy.manifest.round, copy.manifest.state_hash()};
  custody_manifest_ = copy.manifest;
  custody_bytes_ = std::make_shared<const std::vector<std::byte>>(std::move(copy.state));
  core_->set_custody(std::move(copy.manifest), custody_bytes_);
}

// The simulated dial back: the secure channel's handshake takes two round trips, and succeeds when
// the network lets a connection from the tracker reach the peer (not behind a NAT, no partition).
void TrackerNode::answer_probe(const proto::Probe& probe) {
  if (!directory_.knows(probe.peer)) return;  // the core's timeout says unreachable
  const NodeId peer = directory_.node(probe.peer);
  const bool reached = network_.reachability().accepts_connections(peer) &&
                       network_.reachability().connected(node_, peer);
  const Duration round_trip = network_.settings(node_).latency + network_.settings(peer).latency;
  loop_.after(2 * round_trip, [this, process = process_, probe, reached] {
    if (!core_ || process != process_) return;
    if (deferred([this, probe, reached] {
          ++inputs_;
          core_->on_probe_result(loop_.now(), probe.peer, probe.address, reached);
          drive();
        }))
      return;
    ++inputs_;
    core_->on_probe_result(loop_.now(), probe.peer, probe.address, reached);
    drive();
  });
}

// One pending timer event at a time: a later deadline waits for the armed one to fire (an early
// on_timer() is harmless), an earlier one is armed as well.
void TrackerNode::arm_timer() {
  const TimePoint deadline = core_->poll_timeout();
  if (deadline == kNever || deadline >= timer_at_) return;
  timer_at_ = deadline;
  loop_.at(std::max(deadline, loop_.now()), [this, process = process_, deadline] {
    if (!core_ || process != process_ || deadline != timer_at_) return;
    timer_at_ = kNever;
    if (deferred([this] {
          ++inputs_;
          core_->on_timer(loop_.now());
          drive();
        }))
      return;
    ++inputs_;
    core_->on_timer(loop_.now());
    drive();
  });
}

}  // namespace loco::sim
