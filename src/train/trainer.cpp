#include "loco/train/trainer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/local_async_group.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/step_loop.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/training_checkpoint.hpp"

namespace loco::train {
namespace {

using Clock = std::chrono::steady_clock;

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60)
                   : fmt::format("{}m{:02}s", s / 60, s % 60);
}

std::string versus_floor(double loss, const std::optional<double>& floor) {
  if (!floor) return "";
  return fmt::format(" (floor {:.4f}, {:+.1f}%)", *floor, 100.0 * (loss / *floor - 1.0));
}

// The last step of this process: train.steps, or train.stop_at when it stops sooner.
std::uint64_t last_step_of(const TrainConfig& config) {
  return config.train.stop_at > 0 ? std::min(config.train.stop_at, config.train.steps)
                                  : config.train.steps;
}

// Writes the checkpoint, when the config names one.
void save_checkpoint(const TrainConfig& config, TrainingCheckpoint& state, const InnerLoop& loop,
                     TrainSummary& summary) {
  if (config.train.checkpoint.empty()) return;
  state.save(config.train.checkpoint);
  summary.checkpoint = config.train.checkpoint;
  spdlog::info("checkpoint: {} (step {})", config.train.checkpoint, loop.steps());
}

// What run_training does after each step (step_loop.hpp): a progress line every log_every steps,
// validation every eval_every and a checkpoint every checkpoint_every (but at the last step, which
// the exit validates and checkpoints).
class AfterEachStep {
 public:
  AfterEachStep(const TrainConfig& config, InnerLoop& loop, TrainingCheckpoint& state,
                TrainSummary& summary, std::uint64_t last_step)
      : config_(config),
        loop_(loop),
        state_(state),
        summary_(summary),
        last_step_(last_step),
        interval_(loop.tokens_per_step()) {}

  Clock::time_point start() const { return start_; }

  void operator()(const StepOutcome& s) {
    interval_.add(s.loss);
    if (s.step % config_.train.log_every == 0 || s.step == last_step_) log_progress(s);
    if (config_.train.eval_every > 0 && s.step % config_.train.eval_every == 0 &&
        s.step != last_step_) {
      const float val = loop_.evaluate();
      spdlog::info("step {:>6} | validation loss {:.4f}{}", s.step, val,
                   versus_floor(val, summary_.entropy_floor));
    }
    if (config_.train.checkpoint_every > 0 && s.step % config_.train.checkpoint_every == 0 &&
        s.step != last_step_) {
      save_checkpoint(config_, state_, loop_, summary_);
    }
  }

 private:
  void log_progress(const StepOutcome& s) {
    const double elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
    const ProgressInterval::Figures f = interval_.take();
    summary_.train_loss = f.mean_loss;
    const double eta_s =
        elapsed_s / static_cast<double>(s.step - summary_.start_step) * (last_step_ - s.step);
    spdlog::info(
        "step {:>6}/{} | loss {:.4f}{} | lr {:.2e} | grad norm {:.3f} | {:.0f} tok/s | "
        "ETA {}",
        s.step, config_.train.steps, f.mean_loss, versus_floor(f.mean_loss, summary_.entropy_floor),
        s.learning_rate, s.grad_norm, f.tokens_per_s, format_duration(eta_s));
  }

  const TrainConfig& config_;
  InnerLoop& loop_;
  TrainingCheckpoint& state_;
  TrainSummary& summary_;
  std::uint64_t last_step_;
  ProgressInterval interval_;
  Clock::time_point start_ = Clock::now();
};

}  // namespace

TrainSummary run_training(const TrainConfig& config, const std::atomic<bool>* stop) {
  config.validate();
  require_own_model(config);
  model::set_compute_threads(config.train.threads);

  // 1. Data, the inner loop on this process's shard, the strategy (alone: a group of one).
  const Corpus corpus(config.data, static_cast<std::uint32_t>(config.model.gpt.vocab));
  InnerLoop loop(config, corpus);
  log_data_sample(corpus, config.data.shard);
  SoloGroup alone;
  LocalAsyncGroup alone_async(1, config.strategy.fragment_codec);
  SoloGather alone_gather;
  const std::unique_ptr<Strategy> strategy =
      make_strategy(config, loop, alone, &alone_async.member(0), &alone_gather);
  const StrategyRow& row = strategy_row(config.strategy.kind);

  // 2. Resume: every arena, the step, AdamW's step count, the round and the data cursor.
  TrainSummary summary;
  summary.parameters = loop.layout()->parameter_count();
  summary.entropy_floor = corpus.entropy_floor();
  TrainingCheckpoint state(loop, *strategy, checkpoint_identity(config, corpus));
  Start how = Start::fresh;
  if (!config.train.resume.empty()) {
    loop.sampler().restore(state.load(config.train.resume));
    how = Start::resumed;
    spdlog::info("resumed from {} at step {}", config.train.resume, loop.steps());
  }
  strategy->begin(loop, how);
  summary.start_step = loop.steps();
  const std::uint64_t last_step = last_step_of(config);
  if (summary.start_step >= last_step)
    spdlog::info("nothing to train: the checkpoint is at step {}, and the run ends at step {}",
                 summary.start_step, last_step);
  spdlog::info(
      "training a {} of {} parameters for steps {}..{} on {} training tokens, {} threads{}",
      config.model.kind, summary.parameters, loop.steps(), last_step,
      loop.sampler().range().end - loop.sampler().range().begin, config.train.threads,
      row.kind == StrategyKind::none ? "" : fmt::format(", {} alone", describe_strategy(config)));

  // 3. The steps (step_loop.hpp), with a progress line every log_every steps, validation and
  // checkpoints.
  AfterEachStep after_each(config, loop, state, summary, last_step);
  run_steps(
      loop, *strategy, [&] { return loop.steps() < last_step; }, stop,
      StepHooks{.computed = {}, .done = [&](const StepOutcome& s) { after_each(s); }});

  // 4. At exit: validation loss and a checkpoint of where the run stopped.
  summary.end_step = loop.steps();
  summary.seconds = std::chrono::duration<double>(Clock::now() - after_each.start()).count();
  if (summary.end_step > summary.start_step) {
    summary.tokens_per_second = loop.tokens_per_step() *
                                static_cast<double>(summary.end_step - summary.start_step) /
                                summary.seconds;
  }
  summary.val_loss = loop.evaluate();
  spdlog::info("step {:>6} | validation loss {:.4f}{}", summary.end_step, *summary.val_loss,
               versus_floor(*summary.val_loss, summary.entropy_floor));
  save_checkpoint(config, state, loop, summary);
  if (row.group == RoundGroup::asynchronous) {
    spdlog::info("streaming: {} bytes of encoded fragment deltas handed over, largest {} bytes",
                 alone_async.bytes_handed_over(0), alone_async.largest_message());
  }
  summary.params_blake2b = to_hex(blake2b(loop.params()));
  return summary;
}

std::string describe(const TrainSummary& s, const TrainConfig& config) {
  std::string out;
  if (s.end_step == s.start_step) {
    out +=
        fmt::format("nothing to train: {} of {} parameters, the checkpoint is at step {} of {}\n",
                    config.model.kind, s.parameters, s.end_step, config.train.steps);
  } else {
    out += fmt::format(
        "trained {} with {} parameters: steps {}..{} in {:.1f} s ({:.0f} tokens/s)\n",
        config.model.kind, s.parameters, s.start_step, s.end_step, s.seconds, s.tokens_per_second);
  }
  std::vector<std::string> losses;
  if (s.train_loss) losses.push_back(fmt::format("final train loss {:.4f}", *s.train_loss));
  if (s.val_loss) {
    losses.push_back(fmt::format("validation loss {:.4f}", *s.val_loss));
    if (s.entropy_floor)
      losses.push_back(fmt::format("entropy floor {:.4f} (validation {:+.1f}% above it)",
                                   *s.entropy_floor,
                                   100.0 * (*s.val_loss / *s.entropy_floor - 1.0)));
  }
  if (!losses.empty()) out += fmt::format("{}\n", fmt::join(losses, ", "));
  out += fmt::format("parameters blake2b {}\n", s.params_blake2b);
  if (!s.checkpoint.empty()) out += fmt::format("checkpoint {}\n", s.checkpoint);
  return out;
}

}  // namespace loco::train
