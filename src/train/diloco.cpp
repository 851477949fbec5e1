#include "loco/train/diloco.hpp"

#include <fmt/format.h>

#include <cmath>

#include "loco/core/error.hpp"

namespace loco::train {

void DiLoCoConfig::validate() const {
  if (inner_steps == 0) throw Error(ErrorCategory::config, "[diloco] h: at least one inner step");
  outer.validate();
}

DiLoCo::DiLoCo(DiLoCoConfig config, const std::shared_ptr<const ArenaLayout>& layout,
               OuterGroup& group)
    : config_(config),
      group_(group),
      shared_(layout, shared_names()),
      delta_(layout),
      tentative_(layout, shared_names()) {
  config_.validate();
}

void DiLoCo::begin(InnerLoop& loop, Start how) {
  switch (how) {
    case Start::fresh:  // genesis: the initial parameters, zero momentum
      theta().copy_from(loop.params());
      momentum().fill(0.0f);
      shared_.set_round(0);
      break;
    case Start::resumed: break;
    case Start::joined:  // the run's place in the lr schedule: H steps per round
      loop.params().copy_from(theta());
      loop.set_steps(shared_.round() * config_.inner_steps);
      break;
  }
}

void DiLoCo::after_step(InnerLoop& loop) {
  if (loop.steps() % config_.inner_steps == 0) round(loop);
}

RoundResult DiLoCo::round(InnerLoop& loop) {
  // Δ = θ_old − θ_new, and its norm for the tracker's screening.
  const auto old_params = theta().data();
  const auto new_params = loop.params().data();
  const auto delta = delta_.data();
  double squares = 0;
  for (std::size_t i = 0; i < delta.size(); ++i) {
    delta[i] = old_params[i] - new_params[i];
    squares += static_cast<double>(delta[i]) * delta[i];
  }
  const std::uint64_t next = shared_.round() + 1;
  last_ = group_.run_round(RoundInput{.round = next,
                                      .delta = delta,
                                      .delta_norm = static_cast<float>(std::sqrt(squares)),
                                      .tentative =
                                          [this, next](std::span<const float> mean) {
                                            tentative_.arena(0).copy_from(theta());
                                            tentative_.arena(1).copy_from(momentum());
                                            optim::outer_nesterov_step(
                                                config_.outer, tentative_.arena(0).data(),
                                                tentative_.arena(1).data(), mean);
                                            tentative_.set_round(next);
                                            return tentative_.hash();
                                          },
                                      .install =
                                          [this] {
                                            theta().copy_from(tentative_.arena(0));
                                            momentum().copy_from(tentative_.arena(1));
                                            shared_.set_round(tentative_.round());
                                          }});
  if (last_.kind != RoundResult::Kind::skipped) loop.params().copy_from(theta());
  if (last_.kind == RoundResult::Kind::replaced)
    loop.set_steps(shared_.round() * config_.inner_steps);
  return last_;
}

}  // namespace loco::train
