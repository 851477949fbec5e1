#include "loco/round/compute_link.hpp"

#include <algorithm>
#include <utility>

#include "loco/proto/state_relay.hpp"

namespace loco::round {

ComputeLink::ComputeLink(proto::PeerCore& core, Mailbox& mailbox, SharedStateGuard& guard,
                         std::string poison)
    : core_(core), mailbox_(mailbox), guard_(guard), poison_(std::move(poison)) {}

void ComputeLink::ready(const proto::Ready& ready, Delta delta, Tentative tentative) {
  if (poison_ == "scale" || poison_ == "segment") {
    // A borrowed Δ is not the core's to change: the poison changes a copy.
    if (const auto* borrowed = std::get_if<std::span<const float>>(&delta))
      delta = std::make_shared<std::vector<float>>(borrowed->begin(), borrowed->end());
    std::vector<float>& values = *std::get<proto::PeerCore::Update>(delta);
    if (poison_ == "scale")
      for (float& v : values) v *= 1000.0f;
    else if (!values.empty())
      values[0] = 1000.0f * std::max(ready.update_norm, 1.0f);
  }
  expect(std::move(tentative), ready.round);
  proto::Ready told = ready;
  if (poison_ == "nan") told.update_norm = std::numeric_limits<float>::quiet_NaN();
  if (poison_ == "tokens") told.tokens <<= 30;
  std::visit([&](auto& values) { core_.ready(told, std::move(values)); }, delta);
}

void ComputeLink::ready_gather(proto::Ready ready, std::vector<std::byte> part,
                               Tentative tentative) {
  expect(std::move(tentative), ready.round);
  core_.ready_gather(ready, std::move(part));
}

void ComputeLink::ready_gossip(TimePoint now, std::uint64_t round, proto::PeerCore::Update packed) {
  expect({}, round);
  core_.ready_gossip(now, round, std::move(packed));
}

void ComputeLink::expect(Tentative tentative, std::uint64_t round) {
  awaiting_preview_ = tentative.after_preview ? std::optional(round) : std::nullopt;
  deferred_.reset();
  tentative_ = std::move(tentative);
}

void ComputeLink::previewed(std::uint64_t round) {
  if (awaiting_preview_ != round) return;  // a round that has ended meanwhile
  awaiting_preview_.reset();
  if (deferred_) report_tentative(*std::exchange(deferred_, std::nullopt));
}

void ComputeLink::round_done(std::uint64_t round, std::uint32_t attempt, const Digest& hash) {
  core_.round_done(round, attempt, hash);
}

void ComputeLink::serve(proto::StateManifest manifest, proto::StateBytes bytes,
                        std::uint64_t version) {
  core_.serve(std::move(manifest), std::move(bytes));
  served_version_ = version;
}

void ComputeLink::serve_copy(proto::StateManifest manifest,
                             std::shared_ptr<const std::vector<std::byte>> bytes) {
  const proto::StateBytes view({std::span<const std::byte>(*bytes)});
  core_.serve(std::move(manifest), view, std::move(bytes));
  served_version_.reset();
}

std::shared_lock<std::shared_mutex> ComputeLink::guard_for(proto::MessageType type) {
  if (!proto::is_state_request(type)) return {};
  return guard_served();
}

std::shared_lock<std::shared_mutex> ComputeLink::guard_for(const proto::ClientEvent& event) {
  if (event.kind != proto::ClientEvent::Kind::state_relay) return {};
  return guard_served();
}

std::shared_lock<std::shared_mutex> ComputeLink::guard_served() {
  std::shared_lock lock(guard_.mutex);
  if (served_version_ && *served_version_ != guard_.version) {
    core_.unserve();
    served_version_.reset();
  }
  return lock;
}

void ComputeLink::state_report(std::uint64_t round, const Digest& hash) {
  core_.state_report(round, hash);
}

void ComputeLink::stats(const proto::Heartbeat& heartbeat) {
  core_.client().set_stats(heartbeat);
}

void ComputeLink::leave(const std::string& reason) {
  expect({}, 0);
  computed_ = false;
  core_.unserve();  // the state is served in place: the compute thread may free it now
  core_.leave(reason);
  while (core_.poll_event()) {
  }
}

void ComputeLink::on_core_event(proto::PeerEvent& e) {
  using Kind = proto::PeerEvent::Kind;
  SwarmEvent out{.text = std::move(e.text),
                 .cause = e.cause,
                 .reply = e.reply,
                 .round = e.round,
                 .attempt = e.attempt,
                 .hash = e.hash,
                 .retry = e.retry,
                 .members = e.members.size(),
                 .share = e.share,
                 .phase = e.phase,
                 .told = e.told,
                 .mean = std::move(e.mean),
                 .parts = std::move(e.parts),
                 .state = std::move(e.state)};
  switch (e.kind) {
    case Kind::note:
    case Kind::collective_started: return;  // nothing the compute thread waits for
    case Kind::kept: out.kind = SwarmEvent::Kind::kept; break;
    case Kind::refused: out.kind = SwarmEvent::Kind::refused; break;
    case Kind::joined: out.kind = SwarmEvent::Kind::joined; break;
    case Kind::mean:
      out.kind = SwarmEvent::Kind::mean;
      out.group = std::move(e.members);
      if ((tentative_.manifest && out.mean) || (tentative_.gathered && out.parts)) {
        // The compute thread goes on from the mean while the state it leads to is hashed here:
        // at once, or once it has previewed the mean (Tentative::after_preview).
        TentativeInput input{
            .round = out.round, .attempt = out.attempt, .mean = out.mean, .parts = out.parts};
        mailbox_.post(std::move(out));
        if (awaiting_preview_ == input.round)
          deferred_ = std::move(input);
        else
          report_tentative(input);
        return;
      }
      break;
    case Kind::committed:
      out.kind = SwarmEvent::Kind::committed;
      if (computed_ && e.mine && tentative_.bytes) {
        // The committed state of an asynchronous round, before the compute thread lands it:
        // newcomers fetch the run's committed state, and the members' own copies are a round
        // behind until then.
        const proto::StateBytes bytes = tentative_.bytes();
        auto copy = served_pool_.take(bytes.size());
        bytes.read(0, *copy);
        serve_copy(std::move(tentative_manifest_), std::move(copy));
      }
      computed_ = false;
      break;
    case Kind::aborted:
      out.kind = SwarmEvent::Kind::aborted;
      computed_ = false;
      deferred_.reset();  // that attempt's hash is wanted no more
      break;
    case Kind::must_fetch:
      out.kind = SwarmEvent::Kind::must_fetch;
      computed_ = false;
      deferred_.reset();
      break;
    case Kind::fetched:
      out.kind = SwarmEvent::Kind::fetched;
      out.donors = std::move(e.members);
      break;
    case Kind::run_ended:
      out.kind = SwarmEvent::Kind::run_ended;
      out.kept = e.kept;
      break;
  }
  mailbox_.post(std::move(out));
}

void ComputeLink::report_tentative(const TentativeInput& input) {
  SwarmEvent reported{
      .kind = SwarmEvent::Kind::reported, .round = input.round, .attempt = input.attempt};
  {
    // The manifest reads the shared state, which the compute thread may change meanwhile only by
    // loading a fetched state (a resync queued before this mean): not while it is read. (A hash
    // of that state then matches no one's, and the round resyncs.)
    const std::shared_lock reading(guard_.mutex);
    tentative_manifest_ =
        input.mean ? tentative_.manifest(*input.mean) : tentative_.gathered(*input.parts);
  }
  computed_ = true;
  reported.hash = tentative_manifest_.state_hash();
  reported.manifest = std::make_shared<const proto::StateManifest>(tentative_manifest_);
  core_.round_done(reported.round, reported.attempt, reported.hash);
  mailbox_.post(std::move(reported));
}

}  // namespace loco::round
