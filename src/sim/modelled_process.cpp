#include "loco/sim/modelled_process.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/optim/outer_nesterov.hpp"
#include "loco/round/round_step.hpp"
#include "loco/sim/behaviour.hpp"
#include "loco/sim/peer_node.hpp"

namespace loco::sim {
namespace {

// A mean read whole: the fp32 one in place, an encoded one decoded into `decoded` (a modelled
// peer's few values).
std::span<const float> whole(const proto::RoundMean& mean, std::vector<float>& decoded) {
  if (const auto values = mean.fp32()) return *values;
  decoded = mean.values();
  return decoded;
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

ModelledProcess::ModelledProcess(PeerNode& node, const PeerWorld& world, PeerDisk& disk)
    : node_(node), world_(world), disk_(disk) {}

void ModelledProcess::start() {
  if (disk_.checkpoint) {
    state_ = *disk_.checkpoint;
  } else {
    state_.round = 0;
    state_.theta = world_.compute->genesis();
    state_.momentum.assign(state_.theta.size(), 0.0f);
  }
  proto::StateManifest manifest = manifest_of(state_);
  node_.start_core(world_.client.join.genesis, state_.round, manifest.state_hash());
  serve_current(std::move(manifest));
}

void ModelledProcess::take_events() {
  while (const std::optional<round::SwarmEvent> e = mailbox_.wait(Duration::zero())) on_event(*e);
}

void ModelledProcess::on_event(const round::SwarmEvent& e) {
  using Kind = round::SwarmEvent::Kind;
  switch (e.kind) {
    case Kind::joined:  // else a resync follows
      if (phase_ == Phase::joining &&
          round::joined_at_held(e.reply, gossip(), state_.round, state_hash_))
        start_training();
      return;
    case Kind::must_fetch:       // the round under way is over, and its inner phase is for a state
      phase_ = Phase::fetching;  // the run has left
      ++training_;
      round_ = 0;
      tentative_.reset();
      return;
    case Kind::kept:  // the run went back to the state this peer holds
      round_ = 0;
      tentative_.reset();
      start_training();
      return;
    default: break;
  }
  switch (round::round_step(e, round_, mine_)) {
    case round::RoundStep::mean: return gossip() ? apply_gossip(e) : on_mean(e);
    case round::RoundStep::install: return install();
    case round::RoundStep::retry:  // that attempt's state is wanted no more
      mine_ = {};
      tentative_.reset();
      return;
    case round::RoundStep::skip:  // try again at the next round
      round_ = 0;
      tentative_.reset();
      return start_training();
    case round::RoundStep::load: return on_fetched(e);
    case round::RoundStep::resync:    // its state differs from the majority's: a fetch follows
    case round::RoundStep::reported:  // (it reports its own: no tentative on the link)
    case round::RoundStep::wait: return;
  }
}

void ModelledProcess::start_training() {
  phase_ = Phase::training;
  const std::uint64_t phase = ++training_;
  const Duration length = world_.phase_time > Duration{0}
                              ? world_.phase_time
                              : world_.compute->inner_steps() * disk_.step_time;
  node_.schedule_at(node_.now() + length, [this, phase](PeerNode&) {
    if (training_ == phase && phase_ == Phase::training) finish_training();
  });
}

std::uint32_t ModelledProcess::steps_a_phase() const {
  if (world_.phase_time <= Duration{0}) return world_.compute->inner_steps();
  const auto fit = world_.phase_time / std::max(disk_.step_time, Duration{1});
  return static_cast<std::uint32_t>(std::clamp<decltype(fit)>(fit, 1, UINT32_MAX));
}

void ModelledProcess::finish_training() {
  phase_ = Phase::waiting;
  if (disk_.behaviour == Behaviour::silent) return;  // live, heartbeating, never ready
  std::vector<float> delta =
      world_.compute->pseudo_gradient(state_.theta, disk_.index, disk_.phases++, steps_a_phase());
  if (disk_.first_update.empty()) disk_.first_update = delta;
  Sent sent = lie(disk_.behaviour, delta, disk_.first_update,
                  counter_u64(disk_.index, disk_.phases, 0x11e));
  round_ = state_.round + 1;
  if (gossip()) {  // θ ‖ v ‖ Δ: what a gossip group averages
    auto packed = std::make_shared<std::vector<float>>(state_.theta);
    packed->insert(packed->end(), state_.momentum.begin(), state_.momentum.end());
    packed->insert(packed->end(), sent.update.begin(), sent.update.end());
    gossip_packed_ = packed;
    node_.run([round = round_, packed = std::move(packed)](round::ComputeLink& link,
                                                           TimePoint now) mutable {
      link.ready_gossip(now, round, std::move(packed));
    });
    return;
  }
  const proto::Ready ready{
      .round = round_, .update_norm = sent.declared_norm, .base_hash = state_hash_};
  node_.run(
      [ready, update = std::make_shared<std::vector<float>>(std::move(sent.update))](
          round::ComputeLink& link, TimePoint) mutable { link.ready(ready, std::move(update)); });
}

void ModelledProcess::on_mean(const round::SwarmEvent& e) {
  std::vector<float> decoded;
  const std::span<const float> mean = whole(*e.mean, decoded);
  // The state this round leads to (train::RoundInput::tentative): the outer step on the mean.
  PeerState next = state_;
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum, mean);
  next.round = e.round;
  tentative_manifest_ = manifest_of(next);
  tentative_ = std::move(next);
  mine_ = tentative_manifest_.state_hash();
  link().round_done(e.round, e.attempt, mine_);
}

void ModelledProcess::install() {
  state_ = std::move(*tentative_);
  tentative_.reset();
  round_ = 0;
  mine_ = {};
  ++installed_;
  disk_.checkpoint = state_;
  serve_current(std::move(tentative_manifest_));
  start_training();
}

// Alone: this peer's own state and update.
void ModelledProcess::apply_gossip(const round::SwarmEvent& e) {
  std::vector<float> decoded;
  const std::span<const float> mean = whole(*e.mean, decoded);
  const std::size_t dim = state_.theta.size();
  PeerState next{.round = e.round,
                 .theta = {mean.begin(), mean.begin() + static_cast<std::ptrdiff_t>(dim)},
                 .momentum = {mean.begin() + static_cast<std::ptrdiff_t>(dim),
                              mean.begin() + static_cast<std::ptrdiff_t>(2 * dim)}};
  optim::outer_nesterov_step(world_.compute->outer(), next.theta, next.momentum,
                             mean.subspan(2 * dim));
  proto::StateManifest manifest = manifest_of(next);
  world_.ledger->group_installed(node_.now(), node_.key(), state_.round, next.round, 0, e.group,
                                 manifest.state_hash());
  state_ = std::move(next);
  round_ = 0;
  ++installed_;
  disk_.checkpoint = state_;
  serve_current(std::move(manifest));
  // The tracker points peers that join far behind at the newest state.
  link().state_report(state_.round, state_hash_);
  start_training();
}

void ModelledProcess::on_fetched(const round::SwarmEvent& e) {
  PeerState fetched = state_;
  if (e.state && !fetched.load(e.round, *e.state))  // none: the state it serves
    throw Error(ErrorCategory::format, "a fetched state of another size");
  proto::StateManifest manifest = manifest_of(fetched);
  const Digest hash = manifest.state_hash();
  if (gossip())
    world_.ledger->copied(node_.now(), node_.key(), fetched.round, hash);
  else
    world_.ledger->fetched(node_.now(), node_.key(), fetched.round, hash);
  state_ = std::move(fetched);
  round_ = 0;
  disk_.checkpoint = state_;
  serve_current(std::move(manifest));
  link().state_report(state_.round, state_hash_);
  start_training();
}

void ModelledProcess::serve_current(proto::StateManifest manifest) {
  state_hash_ = manifest.state_hash();
  link().serve_copy(std::move(manifest),
                    std::make_shared<const std::vector<std::byte>>(state_.bytes()));
}

proto::StateManifest ModelledProcess::manifest_of(const PeerState& state) const {
  return world_.manifests != nullptr ? world_.manifests->manifest(state) : state.manifest();
}

bool ModelledProcess::gossip() const {
  return world_.gossip_group != 0;
}

round::ComputeLink& ModelledProcess::link() {
  return node_.link();
}

}  // namespace loco::sim
