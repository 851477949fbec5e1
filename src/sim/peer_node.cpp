#include "loco/sim/peer_node.hpp"

#include <cmath>
#include <cstring>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::sim {
namespace {

constexpr Duration kFirstBackoff = std::chrono::milliseconds(500);
constexpr Duration kMaxBackoff = std::chrono::seconds(10);

std::pair<std::uint64_t, std::uint32_t> ring_chunk_id(std::span<const std::byte> body) {
  ByteReader r(body, "ring chunk");
  r.u8();
  const std::uint64_t round = r.u64();
  return {round, r.u32()};
}

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
    : world_(world),
      node_(node),
      disk_(disk),
      key_(disk.identity.public_key()),
      codec_(compress::make_codec(world.codec)) {}

void PeerNode::start() {
  if (disk_.checkpoint) {
    state_ = *disk_.checkpoint;
  } else {
    state_.round = 0;
    state_.theta = world_.compute->genesis();
    state_.momentum.assign(state_.theta.size(), 0.0f);
  }
  proto::StateManifest manifest = state_.manifest();
  proto::TrackerClientConfig config = world_.client;
  config.join.listen_address = Directory::address(node_);
  config.join.state_round = state_.round;
  config.join.state_hash = manifest.state_hash();
  client_ = std::make_unique<proto::TrackerClient>(std::move(config));
  world_.network->attach(node_, this);
  serve_current(std::move(manifest));
  connect_tracker();
}

void PeerNode::leave() {
  client_->leave("leaving the run");
  drive_client();
}

// --- the tracker connection ---

void PeerNode::connect_tracker() {
  world_.network->connect(node_, world_.tracker);
}

void PeerNode::tracker_lost() {
  tracker_open_ = false;
  client_->on_disconnect(world_.loop->now());
  client_timer_ = kNever;
  const Duration wait = backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  at(world_.loop->now() + wait, [](PeerNode& self) {
    if (!self.tracker_open_) self.connect_tracker();
  });
}

void PeerNode::drive_client() {
  while (auto e = client_->poll_event()) {
    on_client_event(*e);
    using Kind = proto::ClientEvent::Kind;
    if ((e->kind == Kind::tracker_lost || e->kind == Kind::tracker_error) && tracker_open_) {
      world_.network->close(node_, world_.tracker);
      tracker_lost();
      return;
    }
  }
  while (auto out = client_->poll_transmit()) {
    if (!tracker_open_) continue;  // the client sends again what matters when it joins again
    world_.network->send(node_, world_.tracker, static_cast<std::uint16_t>(out->type),
                         std::move(out->body));
  }
  arm_client_timer();
}

void PeerNode::arm_client_timer() {
  const TimePoint deadline = client_->poll_timeout();
  if (deadline == kNever || deadline >= client_timer_) return;
  client_timer_ = deadline;
  at(deadline, [deadline](PeerNode& self) {
    if (self.client_timer_ != deadline) return;
    self.client_timer_ = kNever;
    self.client_->on_timer(self.world_.loop->now());
    self.drive_client();
  });
}

void PeerNode::on_open(NodeId peer) {
  if (peer != world_.tracker) return;
  tracker_open_ = true;
  backoff_ = kFirstBackoff;
  client_->on_connected(world_.loop->now());
  drive_client();
}

void PeerNode::on_close(NodeId peer, const std::string& why) {
  if (peer == world_.tracker) {
    tracker_lost();
    return;
  }
  const proto::PeerKey& key = world_.directory->key(peer);
  if (all_reduce_ && !all_reduce_->done() && !all_reduce_->failure() &&
      all_reduce_->needs_link_to(key)) {
    // Named: the tracker retries without it alone if it sees it leave too (a crash).
    all_reduce_->fail("lost the connection to a neighbour: " + why, key);
    pump_all_reduce();
  }
  if (fetcher_) {
    fetcher_->on_donor_lost(world_.loop->now(), key);
    pump_fetch();
  }
}

void PeerNode::on_message(NodeId from, std::uint16_t type, std::span<const std::byte> body) {
  if (from == world_.tracker) {
    if (!accepted(type, body.size(), proto::Route::tracker_to_peer)) {
      world_.network->close(node_, world_.tracker);
      tracker_lost();
      return;
    }
    client_->on_message(world_.loop->now(), type, body);
    drive_client();
    return;
  }
  if (!accepted(type, body.size(), proto::Route::peer_to_peer) ||
      !is_member(world_.directory->key(from))) {
    world_.network->close(node_, from);
    return;
  }
  on_peer_message(from, static_cast<proto::MessageType>(type), body);
}

void PeerNode::on_client_event(const proto::ClientEvent& e) {
  using Kind = proto::ClientEvent::Kind;
  switch (e.kind) {
    case Kind::joined:
      if (gossip()) {
        if (phase_ == Phase::joining) start_training();  // no committed state to match
      } else if (ready_round_ != 0) {  // joined again mid-round: the tracker forgot the ready
        client_->ready(ready_);
      } else if (phase_ == Phase::joining && e.reply.committed_round == state_.round &&
                 e.reply.committed_hash == state_hash_) {
        start_training();
      }
      return;  // otherwise a resync follows
    case Kind::group:
      if (e.group.round == ready_round_) start_all_reduce(e.group, delta_);
      return;
    case Kind::commit: on_commit(e.commit); return;
    case Kind::abort_round:
      all_reduce_.reset();
      if (!e.abort.retry && ready_round_ != 0) {
        ready_round_ = 0;
        start_training();  // skipped: train on, try again next round
      }
      return;
    case Kind::resync:  // in gossip mode: joined far behind, copy a group's state
      all_reduce_.reset();
      ready_round_ = 0;
      ++training_;  // an inner phase under way is for a state the run has left
      if (e.resync.round == state_.round && e.resync.state_hash == state_hash_) {
        // The state it holds (the run went back to it): nothing to fetch.
        fetcher_.reset();
        client_->state_report();
        drive_client();
        start_training();
        return;
      }
      start_fetch(e.resync);
      return;
    case Kind::view:
      if (gossip()) gossip_view_changed();
      return;
    case Kind::refused:
    case Kind::state_relay:  // the simulated tracker keeps no custody
    case Kind::tracker_lost:
    case Kind::tracker_error: return;
  }
}

// --- training and rounds ---

void PeerNode::start_training() {
  phase_ = Phase::training;
  const std::uint64_t phase = ++training_;
  const Duration length = world_.compute->inner_steps() * disk_.step_time;
  at(world_.loop->now() + length, [phase](PeerNode& self) {
    if (self.training_ == phase && self.phase_ == Phase::training) self.finish_training();
  });
}

void PeerNode::finish_training() {
  delta_ = world_.compute->pseudo_gradient(state_.theta, disk_.index, disk_.phases++);
  if (disk_.first_update.empty()) disk_.first_update = delta_;
  Sent sent = lie(disk_.behaviour, delta_, disk_.first_update,
                  counter_u64(disk_.index, disk_.phases, 0x11e));
  delta_ = std::move(sent.update);
  phase_ = Phase::waiting;
  ready_round_ = state_.round + 1;
  if (gossip()) {
    start_gossip_round();
    return;
  }
  ready_ = proto::Ready{
      .round = ready_round_, .update_norm = sent.declared_norm, .base_hash = state_hash_};
  client_->ready(ready_);
  drive_client();
}

void PeerNode::start_all_reduce(const proto::Group& group, std::span<const float> contribution) {
  const auto me = std::find(group.members.begin(), group.members.end(), key_);
  if (me == group.members.end()) return;
  work_.assign(contribution.begin(), contribution.end());  // every attempt starts from it
  attempt_ = group.attempt;
  group_members_ = group.members;
  // The ring cannot trim (it sums partial sums): its mean is the plain one.
  trim_ = world_.all_reduce == proto::AllReduceAlgorithm::direct ? group.trim : 0;
  tentative_.reset();
  world_.ledger->all_reduce_started(world_.loop->now(), key_, group.round, group.attempt,
                                    contribution);
  if (disk_.behaviour == Behaviour::accuser && group.members.size() > 1) {
    // Names another member of the group, a different one each attempt.
    const auto self = static_cast<std::size_t>(me - group.members.begin());
    const std::size_t n = group.members.size();
    const std::size_t named = (self + 1 + group.attempt % (n - 1)) % n;
    client_->round_failed(proto::RoundFailed{.round = group.round,
                                             .attempt = group.attempt,
                                             .reason = "a chunk that did not decode",
                                             .suspect = group.members[named]});
    drive_client();
    return;
  }
  all_reduce_ = proto::make_all_reduce(
      world_.all_reduce,
      proto::AllReduceConfig{.round = group.round,
                             .attempt = group.attempt,
                             .members = group.members,
                             .self = static_cast<std::size_t>(me - group.members.begin()),
                             .chunk_values = world_.chunk_values,
                             .codec = codec_.get(),
                             .seed = group.round * 1000 + group.attempt,
                             .median_norm = group.median_norm,
                             .norm_limit = group.norm_limit,
                             .trim = trim_},
      work_);
  mean_done_ = false;
  failure_reported_ = false;
  all_reduce_->start();
  for (const proto::EarlyMessages::Message& m : early_.take({group.round, group.attempt}))
    all_reduce_->on_message(m.from, m.body);
  pump_all_reduce();
}

void PeerNode::pump_all_reduce() {
  if (!all_reduce_) return;
  while (auto t = all_reduce_->poll_transmit())
    send_to(t->to, proto::MessageType::ring_chunk, std::move(t->body));
  if (all_reduce_->failure() && !failure_reported_) {
    failure_reported_ = true;
    if (gossip()) return;  // the view that removes the lost member leaves each survivor alone
    client_->round_failed(proto::RoundFailed{.round = ready_round_,
                                             .attempt = attempt_,
                                             .reason = all_reduce_->failure()->reason,
                                             .suspect = all_reduce_->failure()->suspect});
    drive_client();
    return;
  }
  if (all_reduce_->done() && !mean_done_) {
    mean_done_ = true;
    world_.ledger->all_reduce_done(world_.loop->now(), key_, ready_round_, attempt_, group_members_,
                                   trim_, work_);
    if (gossip()) {
      apply_gossip(work_, group_members_);
      return;
    }
    // The state this round leads to (train::RoundInput::tentative): the outer step on the mean.
    PeerState next = state_;
    optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum, work_);
    next.round = ready_round_;
    tentative_manifest_ = next.manifest();
    tentative_hash_ = tentative_manifest_.state_hash();
    tentative_ = std::move(next);
    client_->round_done(proto::RoundDone{
        .round = ready_round_, .attempt = attempt_, .state_hash = tentative_hash_});
    drive_client();
  }
}

void PeerNode::on_commit(const proto::Commit& commit) {
  all_reduce_.reset();
  ready_round_ = 0;
  if (!tentative_ || tentative_->round != commit.round || tentative_hash_ != commit.state_hash)
    return;  // this peer's state differs from the majority's: a resync follows
  world_.ledger->installed(world_.loop->now(), key_, state_.round, commit.round, tentative_hash_);
  state_ = std::move(*tentative_);
  tentative_.reset();
  ++installed_;
  disk_.checkpoint = state_;
  serve_current(std::move(tentative_manifest_));
  start_training();
}

void PeerNode::serve_current(proto::StateManifest manifest) {
  state_hash_ = manifest.state_hash();
  client_->set_state(state_.round, state_hash_);
  served_ = std::make_shared<const std::vector<std::byte>>(state_.bytes());
  server_.serve(std::move(manifest), proto::StateBytes({std::span(*served_)}));
}

// --- recovery ---

void PeerNode::start_fetch(const proto::Resync& resync) {
  phase_ = Phase::fetching;
  fetching_ = resync;
  std::vector<proto::PeerKey> donors;
  for (const proto::Donor& d : resync.donors) donors.push_back(d.key);
  fetcher_ = std::make_unique<proto::StateFetcher>(
      proto::FetchConfig{.round = resync.round, .state_hash = resync.state_hash, .donors = donors},
      world_.loop->now());
  fetch_timer_ = kNever;
  pump_fetch();
}

void PeerNode::pump_fetch() {
  if (!fetcher_) return;
  while (auto t = fetcher_->poll_transmit()) send_to(t->to, t->type, std::move(t->body));
  for (const auto& [donor, why] : fetcher_->bad_donors())
    client_->report(proto::MisbehaviourReport{.suspect = donor, .reason = why});
  if (fetcher_->done()) {
    PeerState fetched = state_;
    const bool fits = fetched.load(fetching_.round, fetcher_->state());
    fetcher_.reset();
    if (!fits) throw Error(ErrorCategory::format, "a fetched state of another size");
    proto::StateManifest manifest = fetched.manifest();
    const Digest hash = manifest.state_hash();
    if (gossip())
      world_.ledger->copied(world_.loop->now(), key_, fetched.round, hash);
    else
      world_.ledger->fetched(world_.loop->now(), key_, fetched.round, hash);
    state_ = std::move(fetched);
    disk_.checkpoint = state_;
    serve_current(std::move(manifest));
    client_->state_report();
    drive_client();
    start_training();
  } else if (fetcher_->failure()) {
    fetcher_.reset();
    client_->state_report();  // the tracker answers an out-of-sync report with new donors
    drive_client();
  } else {
    const TimePoint deadline = fetcher_->poll_timeout();
    if (deadline < fetch_timer_) {
      fetch_timer_ = deadline;
      at(deadline, [deadline](PeerNode& self) {
        if (!self.fetcher_ || self.fetch_timer_ != deadline) return;
        self.fetch_timer_ = kNever;
        self.fetcher_->on_timer(self.world_.loop->now());
        self.pump_fetch();
      });
    }
    drive_client();
  }
}

void PeerNode::pump_server() {
  while (auto t = server_.poll_transmit()) send_to(t->to, t->type, std::move(t->body));
}

void PeerNode::on_peer_message(NodeId from, proto::MessageType type,
                               std::span<const std::byte> body) {
  const proto::PeerKey& key = world_.directory->key(from);
  try {
    switch (type) {
      case proto::MessageType::ring_chunk: {
        const auto id = ring_chunk_id(body);
        if (all_reduce_ && id == std::pair(ready_round_, attempt_)) {
          all_reduce_->on_message(key, body);
          pump_all_reduce();
        } else if (id.first >= ready_round_) {
          early_.keep(id, key, type, body);
        }
        return;
      }
      case proto::MessageType::state_request:
      case proto::MessageType::chunk_request:
        server_.on_message(key, type, body);
        pump_server();
        return;
      case proto::MessageType::state_manifest:
      case proto::MessageType::state_refusal:
      case proto::MessageType::state_chunk:
        if (fetcher_) {
          fetcher_->on_message(world_.loop->now(), key, type, body);
          pump_fetch();
        }
        return;
      default: throw Error(ErrorCategory::protocol, "a message only the tracker sends");
    }
  } catch (const Error&) {
    world_.network->close(node_, from);
  }
}

void PeerNode::send_to(const proto::PeerKey& to, proto::MessageType type,
                       std::vector<std::byte> body) {
  world_.network->send(node_, world_.directory->node(to), static_cast<std::uint16_t>(type),
                       std::move(body));
}

}  // namespace loco::sim
