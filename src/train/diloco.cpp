#include "loco/train/diloco.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/sum_of_squares.hpp"
#include "loco/proto/round_pace.hpp"

namespace loco::train {

void DiLoCoConfig::validate() const {
  if (inner_steps == 0) throw Error(ErrorCategory::config, "[diloco] h: at least one inner step");
  if (round_time < Duration::zero() || ((round_time > Duration::zero() || paced) && !clock))
    throw Error(ErrorCategory::config, "[diloco] a round bounded by time needs a clock");
  outer.validate();
}

DiLoCo::DiLoCo(DiLoCoConfig config, const std::shared_ptr<const ArenaLayout>& layout,
               OuterGroup& group, OverlappedGroup* overlapped)
    : config_(config),
      group_(group),
      overlapped_(overlapped),
      shared_(layout, shared_names()),
      phase_(config.round_time) {
  config_.validate();
}

void DiLoCo::begin(InnerLoop& loop, Start how) {
  step_tokens_ = static_cast<std::uint64_t>(loop.tokens_per_step());
  rebased();
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, zero momentum
      theta().copy_from(loop.params());
      momentum().zero_resident();  // the first install writes it whole
      shared_.set_round(0);
      break;
    case Start::resumed: break;
    case Start::joined:  // the run's place in the lr schedule: H steps per round
      loop.params().copy_from(theta());
      loop.set_steps(shared_.round() * config_.inner_steps);
      break;
  }
  place_in_schedule(loop);
}

void DiLoCo::joined_paced(Duration phase, TimePoint told) {
  take_phase(RoundResult{.kind = RoundResult::Kind::replaced, .phase = phase});
  phase_from(told);
}

bool DiLoCo::phase_over(const InnerLoop& loop) const {
  if (!timed()) return loop.steps() % config_.inner_steps == 0;
  if (base_steps_ == 0) return false;
  // Paced, before the tracker set a phase: H steps of its own.
  if (phase_ == Duration::zero()) return phase_steps_ >= config_.inner_steps;
  const Duration elapsed = config_.clock() - phase_start_;
  if (elapsed >= phase_) return true;
  // A member slower than the phase's nominal step (P / H: the median member's, when paced) ends
  // its phase early rather than let its next step end more than a nominal step past P: the group
  // forms when its last member is ready, and a member 3x the median's step held every round up
  // to 3 nominal steps past P (the others' utilisation, issue 49). A member as fast as the median
  // or faster ends at P, as before.
  const Duration own_step =
      (config_.clock() - steps_start_) / static_cast<Duration::rep>(phase_steps_);
  const Duration nominal = phase_ / static_cast<Duration::rep>(config_.inner_steps);
  return elapsed + own_step > phase_ + nominal;
}

void DiLoCo::rebased() {
  base_steps_ = 0;
  new_phase();
}

void DiLoCo::new_phase() {
  phase_steps_ = 0;
  if (timed()) phase_start_ = steps_start_ = config_.clock();
}

// The tracker tells a member left out of a round to fetch when that round commits, a commit's
// round trip after the others began their phase at its mean. Counted from the fetch's end, the
// member's phase ended a fetch after theirs, past the straggler wait: it missed the round and
// fetched again, every round (issue 49). Counted from the resync, and an eighth of a phase early
// for that round trip, it says ready with them (or at its next step, when the fetch outlasted
// the phase), with the tokens of the steps it took.
void DiLoCo::phase_from(TimePoint told) {
  if (!timed() || told == TimePoint{}) return;
  const auto early = std::chrono::duration_cast<Duration>(phase_ * (proto::kStragglerShare / 2));
  phase_start_ = std::min(phase_start_, told - early);
}

float DiLoCo::step_seconds() const {
  if (!config_.paced || phase_steps_ == 0) return 0;
  const double elapsed = std::chrono::duration<double>(config_.clock() - steps_start_).count();
  return static_cast<float>(elapsed / static_cast<double>(phase_steps_));
}

void DiLoCo::take_phase(const RoundResult& result) {
  if (config_.paced && result.phase > Duration::zero()) phase_ = result.phase;
}

void DiLoCo::place_in_schedule(InnerLoop& loop) const {
  if (!timed()) return;
  const std::uint64_t h = config_.inner_steps;
  // The rounds whose means the local copy starts from: an overlapped round's counts from its mean.
  const std::uint64_t rounds = pending_ != 0 ? pending_ : shared_.round();
  double share = static_cast<double>(phase_steps_) / static_cast<double>(h);
  if (phase_ > Duration::zero())
    share = std::chrono::duration<double>(config_.clock() - phase_start_).count() /
            std::chrono::duration<double>(phase_).count();
  const auto within =
      static_cast<std::uint64_t>(std::clamp(share, 0.0, 1.0) * static_cast<double>(h));
  loop.set_schedule_step(rounds * h + std::min(within, h));
}

void DiLoCo::after_step(InnerLoop& loop) {
  ++base_steps_;
  ++phase_steps_;
  if (phase_over(loop))
    round(loop);
  else if (pending_ != 0 && overlapped_->outcome_in())
    placed(loop, land(loop.params()));
  else if (pending_ == 0 && config_.paced && overlapped_ != nullptr)
    take_replaced(loop);
  place_in_schedule(loop);
}

// A member left out of a round is told to fetch the state when the round commits, mid-phase; its
// steps since are on a state the run has left (its Δ would be refused), and finished, the phase
// ended a phase after the others' next one: a slow member at the run's start, whose first phase
// is H steps of its own, sat out two rounds (issue 49). Taken at the next step, its phase counts
// from the resync, as a replaced round's.
void DiLoCo::take_replaced(InnerLoop& loop) {
  const std::optional<RoundResult> replaced = overlapped_->take_replaced();
  if (!replaced) return;
  last_ = *replaced;
  take_phase(last_);
  loop.params().copy_from(theta());
  rebased();
  phase_from(last_.told);
}

void DiLoCo::finish(InnerLoop& loop) {
  if (pending_ != 0) placed(loop, land(loop.params()));
  place_in_schedule(loop);
}

RoundResult DiLoCo::placed(InnerLoop& loop, const RoundResult& result) const {
  if (result.kind == RoundResult::Kind::replaced && !timed())
    loop.set_steps(shared_.round() * config_.inner_steps);
  return result;
}

// θ' ‖ v' as the shared state's bytes, chunk by chunk: a chunk's floats are θ' (first half of the
// state) or v' (second half), each computed by the outer step from θ, v and the mean at its index
// (a chunk holds a whole number of floats).
proto::StateManifest DiLoCo::tentative(const proto::RoundMean& mean, std::uint64_t round) const {
  const std::span<const float> theta = shared_.arena(0).data();
  const std::span<const float> v = shared_.arena(1).data();
  const std::size_t n = theta.size();
  return hash_chunks(
      round, 2 * theta.size_bytes(), [&](std::uint64_t chunk, std::span<std::byte> out) {
        // Each of the team's threads keeps its chunk buffers from chunk to chunk and round to
        // round: no allocation per chunk.
        thread_local std::vector<float> values, decoded;
        values.resize(out.size() / sizeof(float));
        decoded.resize(values.size());
        std::size_t first = chunk * proto::kStateChunkBytes / sizeof(float);  // in θ ‖ v
        for (std::size_t done = 0; done < values.size();) {
          const bool is_theta = first < n;
          const std::size_t at = is_theta ? first : first - n;  // in θ or in v
          const std::size_t count = std::min(values.size() - done, n - at);
          const std::span<float> into = std::span(values).subspan(done, count);
          const std::span<float> mean_values = std::span(decoded).first(count);
          mean.decode(at, mean_values);
          optim::outer_nesterov_step_to(
              config_.outer, theta.subspan(at, count), v.subspan(at, count), mean_values,
              is_theta ? into : std::span<float>{}, is_theta ? std::span<float>{} : into);
          done += count;
          first += count;
        }
        std::memcpy(out.data(), values.data(), out.size());
      });
}

// Δ goes into the gradient arena: the last step's optimizer has read it, the next backward
// overwrites it (model.hpp), and nothing reads it in between; the round reads Δ only until the
// mean is in (overlapped_group.hpp) or run_round returns, before that backward.
RoundResult DiLoCo::round(InnerLoop& loop) {
  const RoundResult result = round(loop.params(), loop.grads().data());
  // A round that got its mean is still pending: `result` is the round before's, placed when it
  // landed (between two steps, or above); placed again, a replaced one set the steps back H.
  return pending_ != 0 ? result : placed(loop, result);
}

RoundResult DiLoCo::round(Arena& params) {
  if (!delta_) delta_.emplace(params.shared_layout());
  return round(params, delta_->data());
}

RoundResult DiLoCo::round(Arena& params, std::span<float> delta) {
  // Δ is measured from the state the last round committed; a replaced state starts a phase.
  if (pending_ != 0 && land(params).kind == RoundResult::Kind::replaced) return last_;
  times_ = {};
  const auto now = [this] { return config_.clock ? config_.clock() : TimePoint{}; };
  const auto seconds_since = [&now](TimePoint start) {
    return std::chrono::duration<double>(now() - start).count();
  };
  const TimePoint delta_start = now();
  // Δ = θ_old − θ_new, and its norm for the tracker's screening.
  const auto old_params = theta().data();
  const auto new_params = params.data();
  // Block by block, each summed while still in cache.
  constexpr std::size_t kBlock = 16384;
  double squares = 0;
  for (std::size_t begin = 0; begin < delta.size(); begin += kBlock) {
    const std::size_t end = std::min(delta.size(), begin + kBlock);
    for (std::size_t i = begin; i < end; ++i) delta[i] = old_params[i] - new_params[i];
    squares += sum_of_squares(delta.subspan(begin, end - begin));
  }
  const float norm = static_cast<float>(std::sqrt(squares));
  times_.delta_s = seconds_since(delta_start);
  const std::uint64_t next = shared_.round() + 1;
  const PhaseClaim claim{.tokens = timed() ? base_steps_ * step_tokens_ : 0,
                         .step_seconds = step_seconds()};
  if (overlapped_ != nullptr) {
    const TimePoint exchange_start = now();
    overlapped_->start(next, delta, norm, claim, [this, next](const proto::RoundMean& mean) {
      return tentative(mean, next);
    });
    pending_ = next;
    const std::shared_ptr<const proto::RoundMean> mean = overlapped_->mean();
    times_.exchange_s = seconds_since(exchange_start);
    if (!mean) {  // the round ended without a mean: skipped or replaced
      if (land(params).kind != RoundResult::Kind::replaced) new_phase();  // Δ spans both phases
      return last_;
    }
    const TimePoint preview_start = now();
    preview(params, *mean);
    overlapped_->previewed();
    times_.outer_s = seconds_since(preview_start);
    // What the compute thread waited for (docs/SCALE.md, "One peer at a real model size").
    spdlog::debug("round {}: Δ in {:.3f} s, then the mean in {:.3f} s, θ' previewed in {:.3f} s",
                  next, times_.delta_s, times_.exchange_s, times_.outer_s);
    rebased();
    return last_;
  }
  const TimePoint exchange_start = now();
  last_ = group_.run_round(
      RoundInput{.round = next,
                 .delta = delta,
                 .delta_norm = norm,
                 .claim = claim,
                 .tentative =
                     [this, next, &now, &seconds_since](std::span<const float> mean) {
                       const TimePoint start = now();
                       mean_.emplace(mean);
                       proto::StateManifest manifest = tentative(*mean_, next);
                       times_.hash_s += seconds_since(start);
                       return manifest;
                     },
                 .install =
                     [this, next, &now, &seconds_since] {
                       const TimePoint start = now();
                       outer_step(*mean_);
                       shared_.set_round(next);
                       times_.outer_s = seconds_since(start);
                     }});
  times_.exchange_s = seconds_since(exchange_start) - times_.hash_s - times_.outer_s;
  take_phase(last_);
  if (last_.kind != RoundResult::Kind::skipped) {
    params.copy_from(theta());
    rebased();
    if (last_.kind == RoundResult::Kind::replaced) phase_from(last_.told);
  } else {
    new_phase();  // Δ spans both phases; the tokens count on
  }
  return last_;
}

// θ' chunk by chunk into the local copy, from θ and v as they are: the same elementwise step as
// tentative() and install(), so the inner phase starts from the bits the group will commit.
void DiLoCo::preview(Arena& params, const proto::RoundMean& mean) const {
  const std::span<const float> theta = shared_.arena(0).data();
  const std::span<const float> v = shared_.arena(1).data();
  const std::span<float> local = params.data();
  std::size_t covered = 0;
  mean.for_each_chunk([&](std::size_t at, std::span<const float> values) {
    const std::size_t count = values.size();
    optim::outer_nesterov_step_to(config_.outer, theta.subspan(at, count), v.subspan(at, count),
                                  values, local.subspan(at, count), {});
    covered += count;
  });
  LOCO_ASSERT(covered == local.size(), "a mean that does not cover the parameters");
}

// The outer step on θ and v in place, chunk by chunk as the mean decodes.
void DiLoCo::outer_step(const proto::RoundMean& mean) {
  const std::span<float> theta = this->theta().data();
  const std::span<float> v = momentum().data();
  mean.for_each_chunk([&](std::size_t at, std::span<const float> values) {
    optim::outer_nesterov_step(config_.outer, theta.subspan(at, values.size()),
                               v.subspan(at, values.size()), values);
  });
}

void DiLoCo::overlap_with(OverlappedGroup& group) {
  LOCO_ASSERT(pending_ == 0 && overlapped_ == nullptr, "overlap_with after a round");
  overlapped_ = &group;
}

RoundResult DiLoCo::land(Arena& params) {
  const std::uint64_t round = std::exchange(pending_, 0);
  const bool waits = !overlapped_->outcome_in();
  const TimePoint start = config_.clock ? config_.clock() : TimePoint{};
  last_ = overlapped_->land([this, round](const proto::RoundMean& mean) {
    outer_step(mean);
    shared_.set_round(round);
  });
  take_phase(last_);
  if (config_.clock)
    spdlog::debug("round {} landed in {:.3f} s{}", round,
                  std::chrono::duration<double>(config_.clock() - start).count(),
                  waits ? ", waiting for its outcome" : "");
  if (last_.kind == RoundResult::Kind::replaced) {
    params.copy_from(theta());
    rebased();
    phase_from(last_.told);
  }
  return last_;
}

}  // namespace loco::train
