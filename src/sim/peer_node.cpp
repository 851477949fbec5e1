#include "loco/sim/peer_node.hpp"

#include <algorithm>

#include "loco/core/error.hpp"
#include "loco/proto/link_direction.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/relay_messages.hpp"
#include "loco/proto/state_relay.hpp"

namespace loco::sim {
namespace {

bool accepted(std::uint16_t type, std::size_t size, proto::Route route) {
  const auto info = proto::message_info(type);
  return info && info->route == route && size <= info->max_bytes;
}

}  // namespace

PeerNode::PeerNode(const PeerWorld& world, NodeId node, PeerDisk& disk)
    : world_(world), node_(node), disk_(disk), key_(disk.identity.public_key()) {
  if (disk.behaviour == Behaviour::wrong_mean || disk.behaviour == Behaviour::disputer)
    lying_member_.emplace(
        disk.identity, world.client.run_id, world.codec,
        disk.behaviour == Behaviour::wrong_mean ? LyingMember::Lie::mean : LyingMember::Lie::check);
}

void PeerNode::start() {
  world_.network->attach(node_, this);
  if (world_.strategy != nullptr) {
    process_ = std::make_unique<StrategyProcess>(*this, *world_.strategy, disk_.step_time,
                                                 disk_.behaviour, disk_.index);
    process_->start();  // its SwarmGroup's join calls start_core
  } else {
    modelled_ = std::make_unique<ModelledProcess>(*this, world_, disk_);
    modelled_->start();
  }
}

void PeerNode::start_core(const Digest& genesis, std::uint64_t round, const Digest& hash) {
  proto::TrackerClientConfig client = world_.client;
  client.join.listen_address = Directory::address(node_);
  client.join.genesis = genesis;
  client.join.state_round = round;
  client.join.state_hash = hash;
  held_round_ = round;
  held_hash_ = hash;
  GossipGroupings* groupings = world_.groupings;
  member_seen_.reset();
  core_ = std::make_unique<proto::PeerCore>(
      proto::PeerCoreConfig{
          .self = key_,
          .signer = &disk_.identity,
          .codec = world_.codec,
          .chunk_values = world_.chunk_values,
          .all_reduce = world_.all_reduce,
          .gossip_group = world_.gossip_group,
          .gossip_wait = world_.gossip_wait,
          .gossip_group_of =
              [groupings](const proto::GossipRound& r, std::span<const proto::PeerKey> roster,
                          const proto::PeerKey& self) {
                return groupings != nullptr ? groupings->group_of(r, roster, self)
                                            : proto::gossip_group_of(r, roster, self);
              },
          .relay = world_.relay},
      std::move(client));
  link_ =
      process_
          ? std::make_unique<round::ComputeLink>(*core_, process_->mailbox(), process_->guard())
          : std::make_unique<round::ComputeLink>(*core_, modelled_->mailbox(), modelled_->guard());
  world_.network->connect(node_, tracker());
}

void PeerNode::run(const round::NetworkSide::Command& command) {
  command(*link_, world_.loop->now());
  drive();
}

void PeerNode::schedule_at(TimePoint when, std::function<void(PeerNode&)> action) {
  at(when, std::move(action));
}

void PeerNode::leave() {
  leaving_ = true;
  if (!core_) return;  // a strategy peer that has not joined yet
  core_->leave("leaving the run");
  drive();
}

// --- the simulated connections ---

void PeerNode::tracker_lost() {
  tracker_open_ = false;
  core_->client().on_disconnect(world_.loop->now());
  at(world_.loop->now() + addresses_.next(), [](PeerNode& self) {
    if (!self.tracker_open_) self.world_.network->connect(self.node_, self.tracker());
  });
}

void PeerNode::on_open(NodeId peer) {
  if (!is_tracker(peer)) {
    for (proto::PeerCore::Send& t : awaiting_.release(peer))
      world_.network->send(node_, peer, static_cast<std::uint16_t>(t.type), std::move(t.body));
    return;
  }
  if (peer != tracker()) return;  // a replica it moved on from
  tracker_open_ = true;
  addresses_.connected();
  core_->client().on_connected(world_.loop->now());
  drive();
}

void PeerNode::on_close(NodeId peer, const std::string& why) {
  if (is_tracker(peer)) {
    if (peer != tracker()) return;  // a replica it moved on from
    tracker_lost();
  } else {
    awaiting_.forget(peer);
    core_->on_peer_lost(world_.loop->now(), world_.directory->key(peer), why);
  }
  drive();
}

void PeerNode::on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) {
  if (is_tracker(from)) {
    if (from != tracker()) return;  // a replica it moved on from
    if (!accepted(type, body.size(), proto::Route::tracker_to_peer)) {
      world_.network->close(node_, tracker());
      tracker_lost();
    } else {
      core_->client().on_message(world_.loop->now(), type, body);
    }
    drive();
    return;
  }
  const proto::PeerKey& key = world_.directory->key(from);
  if (!accepted(type, body.size(), proto::Route::peer_to_peer) || !sent_by_member(key)) {
    world_.network->close(node_, from);
    return;
  }
  if (type == static_cast<std::uint16_t>(proto::MessageType::relay_data)) {
    on_relay_data(key, body);
    drive();
    return;
  }
  try {
    // (A strategy peer's state is read in place.)
    const auto served = link_->guard_for(static_cast<proto::MessageType>(type));
    core_->on_peer_message(world_.loop->now(), key, static_cast<proto::MessageType>(type), body);
  } catch (const Error&) {
    world_.network->close(node_, from);
  }
  drive();
}

bool PeerNode::sent_by_member(const proto::PeerKey& key) {
  const std::uint64_t changes = core_->client().view_changes();
  if (member_seen_ && member_seen_->view_changes == changes && member_seen_->key == key)
    return true;
  if (!core_->client().is_member(key)) return false;
  member_seen_ = MemberSeen{.key = key, .view_changes = changes};
  return true;
}

NodeId PeerNode::node_of(const proto::PeerKey& key) {
  if (!last_sent_to_ || last_sent_to_->first != key)
    last_sent_to_.emplace(key, world_.directory->node(key));
  return last_sent_to_->second;
}

void PeerNode::on_relay_data(const proto::PeerKey& from, std::span<const std::byte> body) {
  const TimePoint now = world_.loop->now();
  std::optional<proto::RelayData> data;
  try {
    data = core_->on_relay_data(from, body);
  } catch (const Error&) {
    world_.network->close(node_, world_.directory->node(from));
    return;
  }
  if (!data || !core_->client().is_member(data->header.peer)) return;
  // What the end-to-end channel would refuse (net/relayed_links.hpp): the link with the sender
  // fails, and the core names the relay.
  try {
    const auto [type, inner] = proto::decode_plain_payload(data->payload);
    if (!proto::relayable(type, inner.size()))
      throw Error(ErrorCategory::protocol, "a relayed message of a type not relayed");
    const auto served = link_->guard_for(static_cast<proto::MessageType>(type));
    core_->on_peer_message(now, data->header.peer, static_cast<proto::MessageType>(type), inner);
  } catch (const Error& e) {
    core_->on_peer_lost(now, data->header.peer, e.what());
  }
}

void PeerNode::drive() {
  const TimePoint now = world_.loop->now();
  while (auto e = core_->client().poll_event()) {
    using Kind = proto::ClientEvent::Kind;
    auto served = link_->guard_for(*e);  // the tracker's custody pull reads the state
    core_->on_client_event(now, *e);
    served = {};
    if ((e->kind == Kind::tracker_lost || e->kind == Kind::tracker_error) && tracker_open_) {
      world_.network->close(node_, tracker());
      tracker_lost();
    }
  }
  while (auto e = core_->poll_event()) on_core_event(*e);
  while (auto t = core_->poll_transmit()) send_to_peer(std::move(*t));
  while (auto out = core_->client().poll_transmit()) {
    if (!tracker_open_) continue;  // the client sends again what matters when it joins again
    world_.network->send(node_, tracker(), static_cast<std::uint16_t>(out->type),
                         std::move(out->body));
  }
  arm_timer();
  if (process_) process_->poke();
}

void PeerNode::send_to_peer(proto::PeerCore::Send t) {
  const NodeId to = node_of(t.to);
  if (lying_member_ && t.type == proto::MessageType::ring_chunk)
    t.body = lying_member_->rewrite(std::move(t.body));
  if (t.relayed) {  // the simulator's payload is the message in the clear (network.hpp)
    t.body = proto::encode_relay_data(*t.relayed, proto::encode_plain_payload(t.type, t.body));
    t.type = proto::MessageType::relay_data;
  }
  if (t.type == proto::MessageType::relay_data && disk_.behaviour == Behaviour::relay_dropper &&
      !t.relayed)
    return;  // a relay that lies: it forwards nothing
  if (t.on == proto::SendOn::asker && !world_.network->is_open(node_, to))
    return;  // the asker's link is gone: it asks again
  if (t.on == proto::SendOn::their && !world_.network->is_open(node_, to)) {
    const proto::PeerKey member = t.to;
    const std::size_t bytes = t.body.size();
    if (awaiting_.hold(to, std::move(t), bytes))
      core_->on_peer_lost(world_.loop->now(), member, "it did not connect to this peer");
    return;
  }
  world_.network->send(node_, to, static_cast<std::uint16_t>(t.type), std::move(t.body));
}

void PeerNode::arm_timer() {
  const TimePoint deadline = std::min(core_->client().poll_timeout(), core_->poll_timeout());
  if (deadline == kNever || deadline >= timer_) return;
  timer_ = deadline;
  at(deadline, [deadline](PeerNode& self) {
    if (self.timer_ != deadline) return;
    self.timer_ = kNever;
    const TimePoint now = self.world_.loop->now();
    self.core_->client().on_timer(now);
    self.core_->on_timer(now);
    self.drive();
  });
}

// --- what the core tells the process ---

void PeerNode::on_core_event(proto::PeerEvent& e) {
  using Kind = proto::PeerEvent::Kind;
  const TimePoint now = world_.loop->now();
  switch (e.kind) {
    case Kind::collective_started: on_collective_started(e); break;
    case Kind::mean:
      if (e.mean && e.members.size() > 1)
        world_.ledger->all_reduce_done(now, key_, e.round, e.attempt, e.members, e.trim, e.tokens,
                                       e.mean->values());
      if (e.waited_out) world_.ledger->gossip_wait_expired();
      break;
    case Kind::committed:
      if (!e.mine) break;  // its state differs from the majority's: a resync follows
      world_.ledger->installed(now, key_, held_round(), e.round, e.hash);
      held_round_ = e.round;
      held_hash_ = e.hash;
      ++installed_;
      break;
    case Kind::fetched:  // (a modelled peer tells what it loaded, or copied in gossip mode)
      if (process_) world_.ledger->fetched(now, key_, e.round, e.hash);
      held_round_ = e.round;
      held_hash_ = e.hash;
      break;
    default: break;
  }
  link_->on_core_event(e);
  if (modelled_) modelled_->take_events();
}

void PeerNode::on_collective_started(const proto::PeerEvent& e) {
  // What this peer averages: a modelled peer's gossip vector (a gossip group may be done, and its
  // round over in the core, by now), or what the core's collective sums of this peer's update.
  const std::vector<float>* packed = modelled_ ? modelled_->gossip_packed() : nullptr;
  const std::optional<std::vector<float>> mine =
      packed != nullptr ? std::optional(*packed) : core_->contribution();
  if (mine) world_.ledger->all_reduce_started(world_.loop->now(), key_, e.round, e.attempt, *mine);
  if (!modelled_ || !mine) return;  // a strategy peer lies between its strategy and its group
  const auto self = static_cast<std::size_t>(std::find(e.members.begin(), e.members.end(), key_) -
                                             e.members.begin());
  const std::size_t n = e.members.size();
  if (lying_member_) lying_member_->begin(n, self, mine->size(), world_.chunk_values);
  if (disk_.behaviour == Behaviour::accuser && n > 1)  // another member each attempt
    core_->accuse(e.round, e.attempt, "a chunk that did not decode",
                  e.members[(self + 1 + e.attempt % (n - 1)) % n]);
}

}  // namespace loco::sim
