#include "loco/train/training_checkpoint.hpp"

#include <utility>

namespace loco::train {

TrainingCheckpoint::TrainingCheckpoint(InnerLoop& loop, Strategy& strategy, std::string identity)
    : loop_(loop),
      strategy_(strategy),
      identity_(std::move(identity)),
      arenas_{{"", &loop.params()}} {
  if (loop.has_optimizer()) {
    arenas_.push_back({"optim.m", &loop.optimizer().m()});
    arenas_.push_back({"optim.v", &loop.optimizer().v()});
  }
  for (const NamedArena& own : strategy.own_arenas()) arenas_.push_back(own);
  for (SharedState::Part& part : strategy.shared().parts())
    arenas_.push_back({part.name, &part.arena});
}

std::string TrainingCheckpoint::load(const std::filesystem::path& path) {
  StateFileValues at = load_train_state(path, arenas_, {"step", "adamw_steps", "round"}, identity_);
  loop_.set_steps(at.counters.at("step"));
  if (loop_.has_optimizer()) loop_.optimizer().set_steps(at.counters.at("adamw_steps"));
  strategy_.shared().set_round(at.counters.at("round"));
  return std::move(at.cursor);
}

void TrainingCheckpoint::save(const std::filesystem::path& path) const {
  save_train_state(
      path, arenas_,
      StateFileValues{
          .counters = {{"step", loop_.steps()},
                       {"adamw_steps", loop_.has_optimizer() ? loop_.optimizer().steps() : 0},
                       {"round", strategy_.shared().round()}},
          .cursor = loop_.sampler().save()},
      identity_);
}

}  // namespace loco::train
