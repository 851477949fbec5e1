#include "loco/train/streaming_diloco.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::train {

Eager parse_eager(std::string_view name) {
  if (name == "none") return Eager::none;
  if (name == "overlapped") return Eager::overlapped;
  if (name == "delayed") return Eager::delayed;
  throw Error(
      ErrorCategory::config,
      fmt::format("strategy.eager must be 'none', 'overlapped' or 'delayed', not '{}'", name));
}

void StreamingConfig::validate() const {
  if (!(alpha >= 0.0f && alpha <= 1.0f))
    throw Error(ErrorCategory::config, fmt::format("strategy.alpha ({}) must be in [0, 1]", alpha));
  if (eager != Eager::none && tau != 0) {
    throw Error(ErrorCategory::config,
                "strategy.tau must be 0 with strategy.eager: an eager round travels a whole H");
  }
  outer.validate();
  FragmentSchedule(inner_steps, fragments, tau);  // throws for P > H or τ ≥ H/P
}

void alpha_merge(float alpha, std::span<float> local, std::span<const float> global) {
  LOCO_ASSERT(local.size() == global.size(), "α-merge of spans of different sizes");
  const float beta = 1.0f - alpha;
  for (std::size_t i = 0; i < local.size(); ++i) local[i] = alpha * local[i] + beta * global[i];
}

void eager_proxy(std::span<const float> mean_prev, std::span<const float> delta,
                 std::span<const float> delta_prev, std::size_t members, std::span<float> out) {
  LOCO_ASSERT(mean_prev.size() == out.size() && delta.size() == out.size() &&
                  delta_prev.size() == out.size(),
              "eager proxy over spans of different sizes");
  const auto m = static_cast<float>(members);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = mean_prev[i] + (delta[i] - delta_prev[i]) / m;
}

std::vector<std::string> StreamingDiLoCo::shared_names(Eager eager) {
  std::vector<std::string> names = {kOuterParams, kOuterMomentum};
  if (eager == Eager::overlapped) names.emplace_back(kEagerMean);
  return names;
}

namespace {

std::size_t largest(const std::vector<Fragment>& fragments) {
  std::size_t n = 0;
  for (const Fragment& f : fragments) n = std::max(n, f.floats);
  return n;
}

// Calls fn(range, offset in the gathered fragment) for each of the fragment's ranges.
template <typename Fn>
void for_ranges(const Fragment& fragment, Fn&& fn) {
  std::size_t offset = 0;
  for (const ArenaRange& r : fragment.ranges) {
    fn(r, offset);
    offset += r.size;
  }
}

void copy_ranges(const Fragment& fragment, Arena& to, const Arena& from) {
  for_ranges(fragment, [&](const ArenaRange& r, std::size_t) {
    std::ranges::copy(from.range(r), to.range(r).begin());
  });
}

}  // namespace

StreamingDiLoCo::StreamingDiLoCo(StreamingConfig config,
                                 const std::shared_ptr<const ArenaLayout>& layout,
                                 AsyncOuterGroup& group)
    : config_(config),
      group_(group),
      fragments_(make_fragments(*layout, config.fragments, config.layout)),
      schedule_(config.inner_steps, config.fragments, config.tau),
      shared_(layout, shared_names(config.eager)),
      tentative_(layout, shared_names(config.eager)),
      in_flight_(config.fragments),
      delta_(largest(fragments_)),
      mean_(largest(fragments_)),
      anchor_(config.eager != Eager::none ? std::optional<Arena>(layout) : std::nullopt) {
  config_.validate();
  if (config_.eager == Eager::overlapped) {
    proxy_.emplace(layout);
    proxy_v_.emplace(layout);
    last_delta_.emplace(layout);
  }
}

void StreamingDiLoCo::begin(InnerLoop& loop, Start how) {
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, zero momentum (and zero Δ̄(0))
      theta().copy_from(loop.params());
      for (std::size_t i = 1; i < shared_.parts().size(); ++i) shared_.arena(i).zero();
      shared_.set_round(0);
      break;
    case Start::resumed:
      if (config_.eager != Eager::none) {
        throw Error(ErrorCategory::config,
                    "cannot resume a streaming run with strategy.eager = overlapped or delayed: "
                    "its rounds are always in flight and their local Δ is not checkpointed");
      }
      if (schedule_.in_flight(loop.steps())) {
        throw Error(ErrorCategory::config,
                    fmt::format("cannot resume streaming at step {}: a fragment was in flight "
                                "(sent less than strategy.tau = {} steps before); checkpoint at "
                                "a step outside [t_p, t_p + tau)",
                                loop.steps(), config_.tau));
      }
      break;
    case Start::joined: restart(loop); return;
  }
  if (anchor_) anchor_->copy_from(loop.params());
  if (last_delta_) last_delta_->fill(0.0f);
}

void StreamingDiLoCo::restart(InnerLoop& loop) {
  start_from_shared(loop.params());
  loop.set_steps(landed_step(config_, shared_.round()));
}

void StreamingDiLoCo::start_from_shared(Arena& params) {
  params.copy_from(theta());
  if (anchor_) anchor_->copy_from(params);
  if (last_delta_) last_delta_->fill(0.0f);
  flight_.reset();
  std::ranges::fill(in_flight_, std::nullopt);
}

std::uint64_t landed_step(const StreamingConfig& config, std::uint64_t round) {
  if (round == 0) return 0;
  const FragmentSchedule schedule(config.inner_steps, config.fragments, config.tau);
  const std::uint64_t cycle = (round - 1) / config.fragments;
  const auto p = static_cast<std::size_t>((round - 1) % config.fragments);
  const std::uint64_t sent = cycle * config.inner_steps + schedule.offset(p);
  return sent + (config.eager == Eager::none ? config.tau : config.inner_steps);
}

void StreamingDiLoCo::after_step(InnerLoop& loop) {
  const std::uint64_t step = loop.steps();
  Arena& local = loop.params();
  if (config_.eager != Eager::none) {
    for (std::size_t p = 0; p < fragments_.size(); ++p)
      if (schedule_.sends(p, step) && !eager_sync(p, loop)) return;
    return;
  }
  // The landing first (a fragment may land on the step where the next one leaves), then the
  // send; with τ = 0 a fragment lands on the step it leaves.
  const auto land_flight = [&](const Flight& f) {
    const RoundResult r = land(f.handle, loop);
    if (r.kind == RoundResult::Kind::committed) merge(f.fragment, local, theta());
    return r.kind != RoundResult::Kind::replaced;
  };
  if (flight_ && flight_->lands_after == step &&
      !land_flight(*std::exchange(flight_, std::nullopt)))
    return;
  for (std::size_t slot = 0; slot < fragments_.size(); ++slot) {
    if (!schedule_.sends(slot, step)) continue;
    // The fragment of the next round: the slot's own unless a round was skipped (module header).
    const auto p = static_cast<std::size_t>(shared_.round() % fragments_.size());
    const Flight f{
        .fragment = p, .handle = send(p, local, theta()), .lands_after = step + config_.tau};
    if (config_.tau != 0) {
      flight_ = f;
    } else if (!land_flight(f)) {
      return;
    }
  }
}

AsyncOuterGroup::Handle StreamingDiLoCo::send(std::size_t p, const Arena& local,
                                              const Arena& base) {
  const Fragment& f = fragments_[p];
  for_ranges(f, [&](const ArenaRange& r, std::size_t at) {
    const auto old_params = base.range(r);
    const auto new_params = local.range(r);
    for (std::size_t i = 0; i < r.size; ++i) delta_[at + i] = old_params[i] - new_params[i];
  });
  return group_.start_round(p, std::span(delta_).first(f.floats), landing(p));
}

Landing StreamingDiLoCo::landing(std::size_t p) {
  return Landing{.tentative = [this, p](std::span<const float> mean) -> const SharedState& {
                   for (std::size_t i = 0; i < shared_.parts().size(); ++i)
                     tentative_.arena(i).copy_from(shared_.arena(i));
                   for_ranges(fragments_[p], [&](const ArenaRange& r, std::size_t at) {
                     const std::span<const float> mean_r = mean.subspan(at, r.size);
                     optim::outer_nesterov_step(config_.outer, tentative_.arena(0).range(r),
                                                tentative_.arena(1).range(r), mean_r);
                     if (config_.eager == Eager::overlapped)  // Δ̄(k−1), the next proxy's base
                       std::ranges::copy(mean_r, tentative_.arena(2).range(r).begin());
                   });
                   tentative_.set_round(shared_.round() + 1);
                   return tentative_;
                 },
                 .install =
                     [this] {
                       for (std::size_t i = 0; i < shared_.parts().size(); ++i)
                         shared_.arena(i).copy_from(tentative_.arena(i));
                       shared_.set_round(tentative_.round());
                     }};
}

RoundResult StreamingDiLoCo::land(AsyncOuterGroup::Handle handle, InnerLoop& loop) {
  const RoundResult result = group_.finish_round(handle);
  if (result.kind == RoundResult::Kind::replaced) restart(loop);
  return result;
}

void StreamingDiLoCo::merge(std::size_t p, Arena& local, const Arena& target) const {
  for_ranges(fragments_[p], [&](const ArenaRange& r, std::size_t) {
    alpha_merge(config_.alpha, local.range(r), target.range(r));
  });
}

std::size_t StreamingDiLoCo::start_fragment(Arena& params) {
  LOCO_ASSERT(!fragment_started(), "a fragment round started twice");
  const std::size_t p = next_fragment();
  if (config_.eager != Eager::none) {
    LOCO_ASSERT(fragments_.size() == 1, "a trainer's eager rounds take one fragment");
    eager_send(p, params);
    eager_landed_ = false;
    return p;
  }
  flight_ = Flight{.fragment = p, .handle = send(p, params, theta()), .lands_after = 0};
  return p;
}

bool StreamingDiLoCo::fragment_started() const {
  return flight_.has_value() ||
         std::ranges::any_of(in_flight_, [](const auto& h) { return h.has_value(); });
}

std::size_t StreamingDiLoCo::started_fragment() const {
  LOCO_ASSERT(fragment_started(), "no fragment round started");
  if (flight_) return flight_->fragment;
  return static_cast<std::size_t>(
      std::ranges::find_if(in_flight_, [](const auto& h) { return h.has_value(); }) -
      in_flight_.begin());
}

RoundResult StreamingDiLoCo::land_fragment(Arena& params) {
  LOCO_ASSERT(fragment_started(), "a fragment round landed that was not started");
  if (config_.eager != Eager::none) return eager_land(started_fragment(), params);
  const Flight f = *std::exchange(flight_, std::nullopt);
  const RoundResult result = group_.finish_round(f.handle);
  if (result.kind == RoundResult::Kind::committed) merge(f.fragment, params, theta());
  if (result.kind == RoundResult::Kind::replaced) start_from_shared(params);
  return result;
}

bool StreamingDiLoCo::eager_sync(std::size_t p, InnerLoop& loop) {
  // Round k−1 lands (Δ̄(k−1) into θ_p, v_p) before round k starts (module header).
  eager_landed_ = false;
  if (in_flight_[p]) {
    const RoundResult r = eager_land(p, loop.params());
    if (r.kind == RoundResult::Kind::replaced) {
      loop.set_steps(landed_step(config_, shared_.round()));
      return false;
    }
  }
  eager_send(p, loop.params());
  return true;
}

RoundResult StreamingDiLoCo::eager_land(std::size_t p, Arena& local) {
  const AsyncOuterGroup::Handle previous = *std::exchange(in_flight_[p], std::nullopt);
  const RoundResult r = group_.finish_round(previous);
  if (r.kind == RoundResult::Kind::replaced) start_from_shared(local);
  eager_landed_ = r.kind == RoundResult::Kind::committed;
  return r;
}

void StreamingDiLoCo::eager_send(std::size_t p, Arena& local) {
  const Fragment& f = fragments_[p];
  in_flight_[p] = send(p, local, *anchor_);  // Δ_i(k) in delta_, round k
  if (config_.eager == Eager::delayed) {
    if (eager_landed_) merge(p, local, theta());
  } else {
    const Arena& mean_prev = shared_.arena(2);
    copy_ranges(f, *proxy_, theta());
    copy_ranges(f, *proxy_v_, momentum());
    for_ranges(f, [&](const ArenaRange& r, std::size_t at) {
      const std::span<float> delta = std::span(delta_).subspan(at, r.size);
      const std::span<float> tilde = std::span(mean_).subspan(at, r.size);
      eager_proxy(mean_prev.range(r), delta, last_delta_->range(r), group_.members(), tilde);
      optim::outer_nesterov_step(config_.outer, proxy_->range(r), proxy_v_->range(r), tilde);
      std::ranges::copy(delta, last_delta_->range(r).begin());
    });
    merge(p, local, *proxy_);
  }
  copy_ranges(f, *anchor_, local);
}

}  // namespace loco::train
