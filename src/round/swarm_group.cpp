#include "loco/round/swarm_group.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/round/round_step.hpp"

namespace loco::round {
namespace {

// A round waits as long as the run needs (a slow group, a long timed quorum); this only makes the
// wait visible in the log now and then.
constexpr Duration kNotice = std::chrono::minutes(1);
// How often a wait looks at the stop flag.
constexpr Duration kStopCheck = std::chrono::milliseconds(200);
// How long a peer stopped mid-round, its hash already with the tracker, waits for the round's
// outcome before leaving.
constexpr Duration kStopGrace = std::chrono::seconds(2);

// A refused event's error: its text says who refused and why (proto::ClientEvent).
Error cannot_join(const SwarmEvent& e) {
  return Error(e.cause, e.text);
}

}  // namespace

SwarmGroup::SwarmGroup(std::unique_ptr<NetworkSide> side, const std::atomic<bool>* stop)
    : stop_(stop), side_(std::move(side)) {}

SwarmGroup::~SwarmGroup() {
  leave("stopping");
}

std::optional<SwarmEvent> SwarmGroup::wait_event() {
  const auto started = std::chrono::steady_clock::now();
  auto noticed = started;
  for (;;) {
    if (stop_ != nullptr && stop_->load()) return std::nullopt;
    if (auto e = side_->wait(kStopCheck)) {
      wait_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (e->kind == SwarmEvent::Kind::refused) throw cannot_join(*e);
      if (e->kind == SwarmEvent::Kind::joined) last_join_ = e->reply;  // joined again
      return e;
    }
    if (std::chrono::steady_clock::now() - noticed > kNotice) {
      noticed = std::chrono::steady_clock::now();
      spdlog::info("still waiting for the run's other peers ({:.0f} s)",
                   std::chrono::duration<double>(noticed - started).count());
    }
  }
}

JoinOutcome SwarmGroup::join(const proto::StateManifest& genesis, bool at_genesis,
                             Duration patience, std::optional<Duration> fetch_patience) {
  const std::uint64_t round = shared_->round();
  proto::StateManifest manifest = at_genesis ? genesis : shared_->manifest();
  const Digest hash = manifest.state_hash();
  current_ = hash;
  side_->start(genesis.state_hash(), round, hash);
  // It holds this state: it may serve it, and a resync to it (the run went back to it) is taken
  // from this copy.
  serve_current(std::move(manifest));
  JoinOutcome outcome;
  // Until the tracker answers, `patience`; then the fetch (if any) gets `fetching` from there.
  const Duration fetching = fetch_patience.value_or(patience);
  auto deadline = std::chrono::steady_clock::now() + patience;
  bool joined = false;
  for (;;) {
    if (stop_ != nullptr && stop_->load()) {
      outcome.stopped = true;
      return outcome;
    }
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Duration::zero() && !joined)
      throw Error(ErrorCategory::network,
                  "no answer from the tracker: check [tracker] address and that it runs");
    if (left <= Duration::zero())
      throw Error(ErrorCategory::network,
                  fmt::format("the run's state of round {} was not fetched within {:.0f} s (the "
                              "log names each donor tried and what went wrong)",
                              outcome.reply.committed_round,
                              std::chrono::duration<double>(fetching).count()));
    // Short waits, so that a signal is noticed while the tracker is unreachable.
    auto e = side_->wait(std::min(std::chrono::duration_cast<Duration>(left), kStopCheck));
    if (!e) continue;
    switch (e->kind) {
      case SwarmEvent::Kind::refused: throw cannot_join(*e);
      case SwarmEvent::Kind::joined:
        outcome.reply = e->reply;
        last_join_ = e->reply;
        // (Gossip mode: a peer far behind is told to copy a neighbour, and its next round takes
        // the copy.)
        if (joined_at_held(e->reply, side_->gossip(), round, hash)) {
          outcome.phase = std::chrono::milliseconds(e->reply.phase_ms);  // from training's start
          return outcome;
        }
        spdlog::info("the run is at round {}; this peer holds round {}: fetching the run's state",
                     e->reply.committed_round, round);
        joined = true;
        deadline = std::chrono::steady_clock::now() + fetching;
        break;
      case SwarmEvent::Kind::fetched:
        load_fetched(*e);
        outcome.fetched = true;
        outcome.donors = e->donors;
        outcome.phase = e->phase;
        outcome.told = e->told;
        return outcome;
      default: break;  // must_fetch: the fetch is under way
    }
  }
}

train::RoundResult SwarmGroup::run_round(const train::RoundInput& input) {
  if (side_->gossip()) return landed(gossip_round(input));
  begin_round(input.round, input.delta, input.delta_norm, input.claim);
  return end_round(input);
}

void SwarmGroup::begin_round(std::uint64_t round, std::span<const float> delta, float norm,
                             const train::PhaseClaim& claim, ComputeLink::Tentative tentative) {
  auto update = update_pool_.take(delta.size());
  std::copy(delta.begin(), delta.end(), update->begin());
  hand_over(round, std::move(update), norm, claim, std::move(tentative));
}

void SwarmGroup::hand_over(std::uint64_t round, ComputeLink::Delta update, float norm,
                           const train::PhaseClaim& claim, ComputeLink::Tentative tentative) {
  LOCO_ASSERT(begun_ == 0, "a swarm round begun before the last one ended");
  begun_ = round;
  progress_ = {};
  reported_here_ = static_cast<bool>(tentative);
  served_at_commit_ = static_cast<bool>(tentative.bytes);
  const proto::Ready ready{.round = round,
                           .update_norm = norm,
                           .base_hash = current_,
                           .loss = phase_loss_,
                           .tokens = claim.tokens,
                           .step_seconds = claim.step_seconds};
  side_->post([ready, update = std::move(update), tentative = std::move(tentative)](
                  ComputeLink& link, TimePoint) mutable {
    link.ready(ready, std::move(update), std::move(tentative));
  });
}

bool SwarmGroup::round_in_flight() const {
  return begun_ != 0 && !progress_.mean && !side_->holds([&](const SwarmEvent& e) {
    return e.kind == SwarmEvent::Kind::mean && e.round == begun_;
  });
}

train::RoundResult SwarmGroup::end_round(const train::RoundInput& input) {
  LOCO_ASSERT(begun_ == input.round, "a swarm round ended that was not begun");
  begun_ = 0;
  return landed(attempt_round(
      input.round, [&](const SwarmEvent& e) { return input.tentative(whole(*e.mean)); },
      input.install));
}

// An fp32 mean in place, an encoded one decoded into a buffer of update_pool_: the one Δ's copy
// took, which the core let go once it had encoded it.
std::span<const float> SwarmGroup::whole(const proto::RoundMean& mean) {
  if (const auto values = mean.fp32()) return *values;
  progress_.decoded = update_pool_.take(mean.size());
  mean.decode(0, *progress_.decoded);
  return *progress_.decoded;
}

void SwarmGroup::start(std::uint64_t round, std::span<const float> delta, float norm,
                       const train::PhaseClaim& claim,
                       std::function<proto::StateManifest(const proto::RoundMean&)> manifest) {
  hand_over(
      round, delta, norm, claim,
      ComputeLink::Tentative{
          .manifest = std::move(manifest), .gathered = {}, .bytes = {}, .after_preview = true});
}

std::shared_ptr<const proto::RoundMean> SwarmGroup::mean() {
  LOCO_ASSERT(begun_ != 0 && reported_here_, "mean() of a round not started with start()");
  while (!progress_.mean && !progress_.ended) {
    const auto next = wait_event();
    if (!next) return nullptr;  // stopped: land() waits a moment for the outcome
    progress_.ended = on_round_event(begun_, *next, {}, {});
  }
  return progress_.mean;
}

void SwarmGroup::previewed() {
  LOCO_ASSERT(begun_ != 0 && progress_.mean, "previewed() before the round's mean");
  side_->post([round = begun_](ComputeLink& link, TimePoint) { link.previewed(round); });
}

bool SwarmGroup::outcome_in() const {
  return progress_.ended || side_->holds([&](const SwarmEvent& e) {
    return e.kind == SwarmEvent::Kind::fetched ||
           (e.round == begun_ && (e.kind == SwarmEvent::Kind::committed ||
                                  (e.kind == SwarmEvent::Kind::aborted && !e.retry)));
  });
}

train::RoundResult SwarmGroup::land(const std::function<void(const proto::RoundMean&)>& install) {
  return end_round(train::RoundInput{
      .round = begun_, .delta = {}, .delta_norm = 0, .tentative = {}, .install = [&] {
        install(*progress_.mean);
      }});
}

std::optional<train::RoundResult> SwarmGroup::take_replaced() {
  const auto fetched = [](const SwarmEvent& e) { return e.kind == SwarmEvent::Kind::fetched; };
  if (begun_ != 0 || !side_->holds(fetched)) return std::nullopt;
  // No round is open: the events before it are of rounds that ended (stale) or of the fetch.
  while (const auto e = wait_event())
    if (fetched(*e)) return landed(*on_round_event(0, *e, {}, {}));
  return std::nullopt;  // stopped
}

train::RoundResult SwarmGroup::run_gather(const train::GatherInput& input) {
  LOCO_ASSERT(begun_ == 0, "a gather round begun while another round is open");
  progress_ = {};
  reported_here_ = false;
  served_at_commit_ = false;
  const proto::Ready ready{.round = input.round, .base_hash = current_, .loss = phase_loss_};
  side_->post(
      [ready, part = std::vector<std::byte>(input.contribution.begin(), input.contribution.end())](
          ComputeLink& link, TimePoint) mutable { link.ready_gather(ready, std::move(part)); });
  return landed(attempt_round(
      input.round, [&](const SwarmEvent& e) { return input.tentative(*e.parts); }, input.install));
}

void SwarmGroup::start_gather(train::GatherStart input) {
  LOCO_ASSERT(begun_ == 0, "a gather round begun while another round is open");
  begun_ = input.round;
  progress_ = {};
  reported_here_ = true;
  served_at_commit_ = static_cast<bool>(input.bytes);
  const proto::Ready ready{.round = input.round, .base_hash = current_, .loss = phase_loss_};
  side_->post([ready, part = std::move(input.contribution),
               tentative = ComputeLink::Tentative{.manifest = {},
                                                  .gathered = std::move(input.tentative),
                                                  .bytes = std::move(input.bytes)}](
                  ComputeLink& link, TimePoint) mutable {
    link.ready_gather(ready, std::move(part), std::move(tentative));
  });
}

train::RoundResult SwarmGroup::land_gather(const std::function<void()>& install) {
  LOCO_ASSERT(begun_ != 0 && reported_here_,
              "land_gather of a round not started with start_gather");
  const std::uint64_t round = begun_;
  begun_ = 0;
  return landed(attempt_round(round, {}, install));
}

train::RoundResult SwarmGroup::landed(train::RoundResult result) {
  // The mean is installed (or not wanted): let go now (a decoded one's buffer back to update_pool_,
  // for the next round's Δ). Held until the next round began, it made that round take a second
  // buffer, and the pool then kept both resident (docs/SCALE.md, peer-scale).
  progress_.mean.reset();
  progress_.decoded.reset();
  last_round_ = result;
  ++rounds_run_;
  return result;
}

train::RoundResult SwarmGroup::skipped() const {
  return train::RoundResult{.kind = train::RoundResult::Kind::skipped, .state = current_};
}

train::RoundResult SwarmGroup::attempt_round(std::uint64_t round, const TentativeOf& tentative,
                                             const std::function<void()>& install) {
  while (!progress_.ended) {
    const auto next = wait_event();
    if (!next) return outcome_on_stop(round, install);
    progress_.ended = on_round_event(round, *next, tentative, install);
  }
  return *progress_.ended;
}

std::optional<train::RoundResult> SwarmGroup::on_round_event(std::uint64_t round,
                                                             const SwarmEvent& e,
                                                             const TentativeOf& tentative,
                                                             const std::function<void()>& install) {
  switch (round_step(e, round, progress_.mine)) {
    case RoundStep::mean:
      progress_.members = e.members;
      progress_.share = e.share;
      progress_.phase = e.phase;
      progress_.mean = e.mean;
      if (reported_here_) break;  // the network thread computes and reports it: `reported`
      progress_.manifest = tentative(e);
      progress_.mine = progress_.manifest.state_hash();
      side_->post([round = e.round, attempt = e.attempt, mine = progress_.mine](
                      ComputeLink& link, TimePoint) { link.round_done(round, attempt, mine); });
      break;
    case RoundStep::reported:
      progress_.mine = e.hash;
      progress_.manifest = *e.manifest;
      break;
    case RoundStep::install:
      change_shared(install);
      current_ = progress_.mine;
      // (Streaming's state is served by the network thread since the commit.)
      if (!served_at_commit_) serve_current(std::move(progress_.manifest));
      return train::RoundResult{.kind = train::RoundResult::Kind::committed,
                                .members = progress_.members,
                                .share = progress_.share,
                                .phase = progress_.phase,
                                .state = current_};
    case RoundStep::resync:
      spdlog::warn("round {}: this peer's state differs from the majority's; resyncing", e.round);
      break;
    case RoundStep::retry:
    case RoundStep::skip:
      spdlog::info("round {} attempt {} aborted: {}{}", e.round, e.attempt, e.text,
                   e.retry ? "; retrying" : "; training on");
      if (!e.retry) return skipped();
      break;
    case RoundStep::load:  // paced: with the phase this member trains next
      load_fetched(e);
      return train::RoundResult{.kind = train::RoundResult::Kind::replaced,
                                .phase = e.phase,
                                .state = current_,
                                .told = e.told};
    case RoundStep::wait: break;
  }
  return std::nullopt;
}

train::RoundResult SwarmGroup::gossip_round(const train::RoundInput& input) {
  std::size_t size = input.delta.size();  // θ ‖ v ‖ Δ: the shared parts, then the update
  for (const train::SharedState::Part& part : shared_->parts()) size += part.arena.data().size();
  auto packed = update_pool_.take(size);
  auto out = packed->begin();
  for (const train::SharedState::Part& part : shared_->parts())
    out = std::copy(part.arena.data().begin(), part.arena.data().end(), out);
  std::copy(input.delta.begin(), input.delta.end(), out);
  side_->post(
      [round = input.round, packed = std::move(packed)](ComputeLink& link, TimePoint now) mutable {
        link.ready_gossip(now, round, std::move(packed));
      });
  for (;;) {
    const auto next = wait_event();
    if (!next) return skipped();
    const SwarmEvent& e = *next;
    const RoundStep step = round_step(e, input.round, Digest{});  // no commit in gossip mode
    if (step == RoundStep::load) {
      load_fetched(e);
      return train::RoundResult{.kind = train::RoundResult::Kind::replaced, .state = current_};
    }
    if (step != RoundStep::mean) continue;
    proto::StateManifest manifest;
    change_shared([&] {
      std::span<const float> mean = whole(*e.mean);
      for (train::SharedState::Part& part : shared_->parts()) {
        const auto values = part.arena.data();
        std::copy_n(mean.begin(), values.size(), values.begin());
        mean = mean.subspan(values.size());
      }
      manifest = input.tentative(mean);
      input.install();
    });
    const Digest mine = manifest.state_hash();
    current_ = mine;
    report_state(input.round, mine);
    serve_current(std::move(manifest));
    return train::RoundResult{
        .kind = train::RoundResult::Kind::committed, .members = e.members, .state = mine};
  }
}

// A signal came mid-round. Once this peer's hash is with the tracker (`mine`, or the network
// thread's report of an asynchronous round) the round may commit with it: the peer waits a moment
// for the outcome and installs a commit, so that the checkpoint it leaves with holds the state the
// run went on from (else it would come back a round behind a run no one else may hold).
train::RoundResult SwarmGroup::outcome_on_stop(std::uint64_t round,
                                               const std::function<void()>& install) {
  if (progress_.mine == Digest{} && !reported_here_) return skipped();
  const auto deadline = std::chrono::steady_clock::now() + kStopGrace;
  for (auto left = kStopGrace; left > Duration::zero();
       left = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now())) {
    const auto e = side_->wait(left);
    if (!e) break;
    switch (round_step(*e, round, progress_.mine)) {
      case RoundStep::mean: progress_.mean = e->mean; continue;
      case RoundStep::reported: progress_.mine = e->hash; continue;
      case RoundStep::install:
        change_shared(install);
        current_ = progress_.mine;
        return train::RoundResult{.kind = train::RoundResult::Kind::committed, .state = current_};
      case RoundStep::resync:
      case RoundStep::retry:
      case RoundStep::skip: return skipped();
      case RoundStep::load:  // a fetch is for a peer that trains on: not loaded on the way out
      case RoundStep::wait: continue;
    }
  }
  return skipped();
}

void SwarmGroup::load_fetched(const SwarmEvent& fetched) {
  if (!fetched.state) {  // the run went back to the state this peer holds: nothing to load
    if (fetched.hash != current_ || fetched.round != shared_->round())
      throw Error(ErrorCategory::format, "told to keep a state this peer does not hold");
    spdlog::info("the run went back to round {}, the state this peer holds", fetched.round);
    report_state(fetched.round, current_);
    return;
  }
  change_shared([&] { shared_->load(fetched.round, *fetched.state); });
  proto::StateManifest manifest = shared_->manifest();
  const Digest hash = manifest.state_hash();
  if (hash != fetched.hash)
    throw Error(ErrorCategory::format,
                "the fetched state does not hash to the run's (a broken invariant of the fetch)");
  current_ = hash;
  spdlog::info("fetched the state of round {}", fetched.round);
  report_state(fetched.round, hash);
  serve_current(std::move(manifest));
}

void SwarmGroup::change_shared(const std::function<void()>& change) {
  SharedStateGuard& guard = side_->guard();
  const std::unique_lock lock(guard.mutex);
  ++guard.version;
  change();
}

// In place (the class comment): the network thread reads the shared state only while nothing
// changed it since this version.
void SwarmGroup::serve_current(proto::StateManifest manifest) {
  side_->post([manifest = std::move(manifest), bytes = shared_->bytes(),
               version = side_->guard().version](ComputeLink& link, TimePoint) mutable {
    link.serve(std::move(manifest), std::move(bytes), version);
  });
}

void SwarmGroup::report_state(std::uint64_t round, const Digest& hash) {
  side_->post([round, hash](ComputeLink& link, TimePoint) { link.state_report(round, hash); });
}

void SwarmGroup::publish(const proto::Heartbeat& heartbeat) {
  side_->post([heartbeat](ComputeLink& link, TimePoint) { link.stats(heartbeat); });
}

void SwarmGroup::leave(const std::string& reason) {
  side_->leave(reason);
}

std::optional<SwarmEvent> SwarmGroup::wait_run_ended(Duration bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (stop_ != nullptr && stop_->load()) return std::nullopt;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Duration::zero()) return std::nullopt;
    if (auto e =
            side_->wait_run_ended(std::min(std::chrono::duration_cast<Duration>(left), kStopCheck)))
      return e;
  }
}

void SwarmGroup::seed(Duration bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  for (;;) {
    if (stop_ != nullptr && stop_->load()) return;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= Duration::zero()) return;
    const auto e = side_->wait(std::min(std::chrono::duration_cast<Duration>(left), kStopCheck));
    if (!e) continue;
    if (e->kind == SwarmEvent::Kind::fetched) load_fetched(*e);
    if (e->kind == SwarmEvent::Kind::refused) {  // no longer a member: nobody is sent here
      spdlog::warn("stopped serving the run's state: {}", e->text);
      return;
    }
  }
}

}  // namespace loco::round
