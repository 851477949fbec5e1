#include "loco/train/step_loop.hpp"

namespace loco::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

StepOutcome train_step(InnerLoop& loop, Strategy& strategy, const StepHooks& hooks) {
  if (hooks.before) hooks.before();
  StepOutcome out;
  out.learning_rate = loop.learning_rate();
  const auto forward_start = Clock::now();
  out.loss = loop.forward_backward();
  out.compute_s = seconds_since(forward_start);
  if (strategy.on_gradients(loop)) {
    const auto optimizer_start = Clock::now();
    out.grad_norm = loop.optimizer_step();
    out.compute_s += seconds_since(optimizer_start);
  }
  out.step = loop.steps();
  if (hooks.computed) hooks.computed(out);
  strategy.after_step(loop);
  out.step = loop.steps();
  if (hooks.done) hooks.done(out);
  return out;
}

void run_steps(InnerLoop& loop, Strategy& strategy, const std::function<bool()>& more,
               const std::atomic<bool>* stop, const StepHooks& hooks) {
  while (more() && !(stop != nullptr && stop->load())) train_step(loop, strategy, hooks);
  strategy.finish(loop);
}

ProgressInterval::ProgressInterval(double tokens_per_step) : tokens_per_step_(tokens_per_step) {}

void ProgressInterval::add(float loss) {
  loss_sum_ += loss;
  ++steps_;
}

ProgressInterval::Figures ProgressInterval::take() {
  Figures f;
  f.steps = steps_;
  f.seconds = seconds_since(start_);
  if (steps_ > 0) f.mean_loss = static_cast<float>(loss_sum_ / static_cast<double>(steps_));
  if (f.seconds > 0) f.tokens_per_s = tokens_per_step_ * static_cast<double>(steps_) / f.seconds;
  start_ = Clock::now();
  loss_sum_ = 0;
  steps_ = 0;
  return f;
}

}  // namespace loco::train
