#include "loco/sim/peer_node.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
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

std::vector<std::byte> PeerState::bytes() const {
  std::vector<std::byte> out((theta.size() + momentum.size()) * sizeof(float));
  std::memcpy(out.data(), theta.data(), theta.size() * sizeof(float));
  std::memcpy(out.data() + theta.size() * sizeof(float), momentum.data(),
              momentum.size() * sizeof(float));
  return out;
}

proto::StateManifest PeerState::manifest() const {
  const std::span<const std::byte> parts[] = {std::as_bytes(std::span(theta)),
                                              std::as_bytes(std::span(momentum))};
  return proto::make_manifest(round, proto::StateBytes({parts[0], parts[1]}));
}

bool PeerState::load(std::uint64_t at_round, std::span<const std::byte> bytes) {
  if (bytes.size() != (theta.size() + momentum.size()) * sizeof(float)) return false;
  std::memcpy(theta.data(), bytes.data(), theta.size() * sizeof(float));
  std::memcpy(momentum.data(), bytes.data() + theta.size() * sizeof(float),
              momentum.size() * sizeof(float));
  round = at_round;
  return true;
}

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
    return;
  }
  if (disk_.checkpoint) {
    state_ = *disk_.checkpoint;
  } else {
    state_.round = 0;
    state_.theta = world_.compute->genesis();
    state_.momentum.assign(state_.theta.size(), 0.0f);
  }
  proto::StateManifest manifest = state_.manifest();
  start_core(world_.client.join.genesis, state_.round, manifest.state_hash());
  serve_current(std::move(manifest));
}

void PeerNode::start_core(const Digest& genesis, std::uint64_t round, const Digest& hash) {
  proto::TrackerClientConfig client = world_.client;
  client.join.listen_address = Directory::address(node_);
  client.join.genesis = genesis;
  client.join.state_round = round;
  client.join.state_hash = hash;
  held_round_ = round;
  state_hash_ = hash;
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
  if (process_)
    link_ = std::make_unique<round::ComputeLink>(*core_, process_->mailbox(), process_->guard());
  world_.network->connect(node_, world_.tracker);
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
  at(world_.loop->now() + backoff_.next(), [](PeerNode& self) {
    if (!self.tracker_open_) self.world_.network->connect(self.node_, self.world_.tracker);
  });
}

void PeerNode::on_open(NodeId peer) {
  if (peer != world_.tracker) {
    for (proto::PeerCore::Send& t : awaiting_.release(peer))
      world_.network->send(node_, peer, static_cast<std::uint16_t>(t.type), std::move(t.body));
    return;
  }
  tracker_open_ = true;
  backoff_.reset();
  core_->client().on_connected(world_.loop->now());
  drive();
}

void PeerNode::on_close(NodeId peer, const std::string& why) {
  if (peer == world_.tracker) {
    tracker_lost();
  } else {
    awaiting_.forget(peer);
    core_->on_peer_lost(world_.loop->now(), world_.directory->key(peer), why);
  }
  drive();
}

void PeerNode::on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) {
  if (from == world_.tracker) {
    if (!accepted(type, body.size(), proto::Route::tracker_to_peer)) {
      world_.network->close(node_, world_.tracker);
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
    std::shared_lock<std::shared_mutex> served;  // a strategy peer's state is read in place
    if (link_) served = link_->guard_for(static_cast<proto::MessageType>(type));
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
    std::shared_lock<std::shared_mutex> served;
    if (link_) served = link_->guard_for(static_cast<proto::MessageType>(type));
    core_->on_peer_message(now, data->header.peer, static_cast<proto::MessageType>(type), inner);
  } catch (const Error& e) {
    core_->on_peer_lost(now, data->header.peer, e.what());
  }
}

void PeerNode::drive() {
  const TimePoint now = world_.loop->now();
  while (auto e = core_->client().poll_event()) {
    using Kind = proto::ClientEvent::Kind;
    std::shared_lock<std::shared_mutex> served;  // the tracker's custody pull reads the state
    if (link_) served = link_->guard_for(*e);
    core_->on_client_event(now, *e);
    served = {};
    if ((e->kind == Kind::tracker_lost || e->kind == Kind::tracker_error) && tracker_open_) {
      world_.network->close(node_, world_.tracker);
      tracker_lost();
    }
  }
  while (auto e = core_->poll_event()) on_core_event(*e);
  while (auto t = core_->poll_transmit()) send_to_peer(std::move(*t));
  while (auto out = core_->client().poll_transmit()) {
    if (!tracker_open_) continue;  // the client sends again what matters when it joins again
    world_.network->send(node_, world_.tracker, static_cast<std::uint16_t>(out->type),
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

// --- what the core tells this process ---

void PeerNode::on_core_event(proto::PeerEvent& e) {
  if (process_) return on_strategy_event(e);
  using Kind = proto::PeerEvent::Kind;
  const TimePoint now = world_.loop->now();
  switch (e.kind) {
    case Kind::joined:
      // Gossip mode commits nothing to match; otherwise a resync follows unless it matches.
      if (phase_ == Phase::joining &&
          (core_->gossip() ||
           (e.reply.committed_round == state_.round && e.reply.committed_hash == state_hash_)))
        start_training();
      return;
    case Kind::collective_started: {
      // What this peer averages, which the ledger checks the mean against: gossip's packed
      // vector (a gossip group may be done, and its round over in the core, by now), or what the
      // core's collective sums of this peer's update.
      const std::vector<float> mine = gossip_packed_ ? *gossip_packed_ : *core_->contribution();
      world_.ledger->all_reduce_started(now, key_, e.round, e.attempt, mine);
      if (lying_member_)
        lying_member_->begin(
            e.members.size(),
            static_cast<std::size_t>(std::find(e.members.begin(), e.members.end(), key_) -
                                     e.members.begin()),
            mine.size(), world_.chunk_values);
      if (disk_.behaviour == Behaviour::accuser && e.members.size() > 1) {
        // Names another member of the group, a different one each attempt.
        const auto self = static_cast<std::size_t>(
            std::find(e.members.begin(), e.members.end(), key_) - e.members.begin());
        const std::size_t n = e.members.size();
        core_->accuse(e.round, e.attempt, "a chunk that did not decode",
                      e.members[(self + 1 + e.attempt % (n - 1)) % n]);
      }
      return;
    }
    case Kind::mean: on_mean(e); return;
    case Kind::committed:
      if (!e.mine || !tentative_ || tentative_->round != e.round)
        return;  // this peer's state differs from the majority's: a resync follows
      world_.ledger->installed(now, key_, state_.round, e.round, e.hash);
      state_ = std::move(*tentative_);
      tentative_.reset();
      ++installed_;
      disk_.checkpoint = state_;
      serve_current(std::move(tentative_manifest_));
      start_training();
      return;
    case Kind::aborted:
      tentative_.reset();
      if (!e.retry && phase_ == Phase::waiting) start_training();  // skipped: try again next round
      return;
    case Kind::must_fetch:
      phase_ = Phase::fetching;
      ++training_;  // an inner phase under way is for a state the run has left
      tentative_.reset();
      return;
    case Kind::fetched: on_fetched(e); return;
    case Kind::kept:  // the run went back to the state this peer holds
      tentative_.reset();
      start_training();
      return;
    case Kind::refused:
    case Kind::run_ended:  // the simulator's peers train until the simulation ends
    case Kind::note: return;
  }
}

void PeerNode::on_strategy_event(proto::PeerEvent& e) {
  using Kind = proto::PeerEvent::Kind;
  const TimePoint now = world_.loop->now();
  switch (e.kind) {
    case Kind::collective_started:
      if (const std::optional<std::vector<float>> mine = core_->contribution())
        world_.ledger->all_reduce_started(now, key_, e.round, e.attempt, *mine);
      break;
    case Kind::mean:
      if (e.mean && e.members.size() > 1)
        world_.ledger->all_reduce_done(now, key_, e.round, e.attempt, e.members, e.trim, e.tokens,
                                       e.mean->values());
      break;
    case Kind::committed:
      if (!e.mine) break;  // its state differs from the majority's: a resync follows
      world_.ledger->installed(now, key_, held_round_, e.round, e.hash);
      held_round_ = e.round;
      state_hash_ = e.hash;
      ++installed_;
      break;
    case Kind::fetched:
      world_.ledger->fetched(now, key_, e.round, e.hash);
      held_round_ = e.round;
      state_hash_ = e.hash;
      break;
    default: break;
  }
  link_->on_core_event(e);
}

void PeerNode::start_training() {
  phase_ = Phase::training;
  const std::uint64_t phase = ++training_;
  const Duration length = world_.phase_time > Duration{0}
                              ? world_.phase_time
                              : world_.compute->inner_steps() * disk_.step_time;
  at(world_.loop->now() + length, [phase](PeerNode& self) {
    if (self.training_ == phase && self.phase_ == Phase::training) self.finish_training();
  });
}

std::uint32_t PeerNode::steps_a_phase() const {
  if (world_.phase_time <= Duration{0}) return world_.compute->inner_steps();
  const auto fit = world_.phase_time / std::max(disk_.step_time, Duration{1});
  return static_cast<std::uint32_t>(std::clamp<decltype(fit)>(fit, 1, UINT32_MAX));
}

void PeerNode::finish_training() {
  if (disk_.behaviour == Behaviour::silent) {  // live, heartbeating, never ready
    phase_ = Phase::waiting;
    return;
  }
  std::vector<float> delta =
      world_.compute->pseudo_gradient(state_.theta, disk_.index, disk_.phases++, steps_a_phase());
  if (disk_.first_update.empty()) disk_.first_update = delta;
  Sent sent = lie(disk_.behaviour, delta, disk_.first_update,
                  counter_u64(disk_.index, disk_.phases, 0x11e));
  phase_ = Phase::waiting;
  const std::uint64_t round = state_.round + 1;
  if (core_->gossip()) {  // θ ‖ v ‖ Δ: what a gossip group averages
    auto packed = std::make_shared<std::vector<float>>(state_.theta);
    packed->insert(packed->end(), state_.momentum.begin(), state_.momentum.end());
    packed->insert(packed->end(), sent.update.begin(), sent.update.end());
    gossip_packed_ = packed;  // the core only reads it in gossip mode
    core_->ready_gossip(world_.loop->now(), round, std::move(packed));
  } else {
    core_->ready(
        proto::Ready{.round = round, .update_norm = sent.declared_norm, .base_hash = state_hash_},
        std::make_shared<std::vector<float>>(std::move(sent.update)));
  }
  drive();
}

void PeerNode::on_mean(const proto::PeerEvent& e) {
  const TimePoint now = world_.loop->now();
  const std::vector<float> mean = e.mean->values();  // a modelled peer's few values, read whole
  if (e.members.size() > 1)
    world_.ledger->all_reduce_done(now, key_, e.round, e.attempt, e.members, e.trim, e.tokens,
                                   mean);
  if (e.waited_out) world_.ledger->gossip_wait_expired();
  if (core_->gossip()) return apply_gossip(e, mean);
  // The state this round leads to (train::RoundInput::tentative): the outer step on the mean.
  PeerState next = state_;
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum, mean);
  next.round = e.round;
  tentative_manifest_ = next.manifest();
  tentative_ = std::move(next);
  core_->round_done(e.round, e.attempt, tentative_manifest_.state_hash());
}

// Gossip mode: the group's θ̄ and v̄ with the outer step on Δ̄, installed at once (alone: this
// peer's own state and update).
void PeerNode::apply_gossip(const proto::PeerEvent& e, std::span<const float> mean) {
  const std::size_t dim = state_.theta.size();
  PeerState next{.round = e.round,
                 .theta = {mean.begin(), mean.begin() + static_cast<std::ptrdiff_t>(dim)},
                 .momentum = {mean.begin() + static_cast<std::ptrdiff_t>(dim),
                              mean.begin() + static_cast<std::ptrdiff_t>(2 * dim)}};
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum,
                             mean.subspan(2 * dim));
  proto::StateManifest manifest = next.manifest();
  world_.ledger->group_installed(world_.loop->now(), key_, state_.round, next.round, 0, e.members,
                                 manifest.state_hash());
  state_ = std::move(next);
  ++installed_;
  disk_.checkpoint = state_;
  serve_current(std::move(manifest));
  // The tracker points peers that join far behind at the newest state.
  core_->state_report(state_.round, state_hash_);
  start_training();
}

void PeerNode::on_fetched(const proto::PeerEvent& e) {
  PeerState fetched = state_;
  if (e.state && !fetched.load(e.round, *e.state))  // none: the state it serves
    throw Error(ErrorCategory::format, "a fetched state of another size");
  proto::StateManifest manifest = fetched.manifest();
  const Digest hash = manifest.state_hash();
  if (core_->gossip())
    world_.ledger->copied(world_.loop->now(), key_, fetched.round, hash);
  else
    world_.ledger->fetched(world_.loop->now(), key_, fetched.round, hash);
  state_ = std::move(fetched);
  disk_.checkpoint = state_;
  serve_current(std::move(manifest));
  core_->state_report(state_.round, state_hash_);
  start_training();
}

void PeerNode::serve_current(proto::StateManifest manifest) {
  state_hash_ = manifest.state_hash();
  auto bytes = std::make_shared<const std::vector<std::byte>>(state_.bytes());
  const proto::StateBytes view({std::span(*bytes)});
  core_->serve(std::move(manifest), view, std::move(bytes));
}

}  // namespace loco::sim
