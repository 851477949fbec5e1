#pragma once
// The training loop every driver runs: loco-train (trainer.cpp), loco-peer and the simulator's
// strategy peers (both through round/peer_session.hpp) and bench-workers. One step is
//
//   (before)
//   loss = loop.forward_backward();
//   if (strategy.on_gradients(loop)) grad_norm = loop.optimizer_step();
//   strategy.after_step(loop);
//
// and run_steps repeats it while the driver's `more` says so and `stop` is not set, then
// lets the strategy land a round still in flight (Strategy::finish). What a driver does around the
// steps it does in three hooks: `before`, before the step's compute (the simulator advances its
// compute thread's virtual clock by a step time there, so that what the step sends leaves after
// its compute), `computed`, before the strategy's after_step (what a round that starts there
// should know: loco-peer's phase loss), and `done`, after it (progress lines, validation,
// checkpoints, heartbeats).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "loco/train/inner_loop.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

struct StepOutcome {
  std::uint64_t step = 0;   // the loop's step count after it
  float loss = 0;           // the batch's mean loss
  float learning_rate = 0;  // the inner learning rate it was scheduled at
  float grad_norm = 0;      // before clipping; 0 where the strategy stepped θ itself (DeMo)
  // Wall time of forward, backward and the optimizer step: the step's compute, without the
  // strategy's share (a round, a gather), which is communication or waiting for it.
  double compute_s = 0;
};

// Each may be empty (a driver names only the hooks it uses).
struct StepHooks {
  // Before forward and backward.
  std::function<void()> before = {};
  // After the optimizer step, before the strategy's after_step (step = the count before it).
  std::function<void(const StepOutcome&)> computed = {};
  // After the whole step.
  std::function<void(const StepOutcome&)> done = {};
};

// One step, as above.
StepOutcome train_step(InnerLoop& loop, Strategy& strategy, const StepHooks& hooks = {});

// Steps while more() and `stop` (may be null) is not set, with `hooks` on every step; then
// strategy.finish(loop).
void run_steps(InnerLoop& loop, Strategy& strategy, const std::function<bool()>& more,
               const std::atomic<bool>* stop, const StepHooks& hooks = {});

// The figures of a progress line: the steps since the last one, their mean loss and speed.
class ProgressInterval {
 public:
  struct Figures {
    std::uint64_t steps = 0;
    float mean_loss = 0;
    double seconds = 0;
    double tokens_per_s = 0;
  };

  explicit ProgressInterval(double tokens_per_step);
  void add(float loss);
  std::uint64_t steps() const { return steps_; }
  // The interval's figures; the next interval starts now.
  Figures take();

 private:
  using Clock = std::chrono::steady_clock;
  double tokens_per_step_;
  Clock::time_point start_ = Clock::now();
  double loss_sum_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace loco::train
