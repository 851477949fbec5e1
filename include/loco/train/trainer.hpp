#pragma once
// One process training one model alone: the inner loop every peer runs (inner_loop.hpp) with a
// strategy (strategy.hpp, make_strategy.hpp: none, or DiLoCo or DDP in a group of one).
// run_training reads top to bottom: data, inner loop and strategy, resume, then the step loop with
// progress lines, validation and checkpoints. Progress goes to the log (spdlog, info level).

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "loco/train/train_config.hpp"

namespace loco::train {

struct TrainSummary {
  std::uint64_t start_step = 0;  // where this process began (> 0 after a resume)
  std::uint64_t end_step = 0;    // steps completed when it stopped
  std::size_t parameters = 0;
  std::optional<float> train_loss;      // mean over the last progress interval; none: no step ran
  std::optional<float> val_loss;        // at end_step
  std::optional<double> entropy_floor;  // nats per token, for the Markov source
  double seconds = 0;
  double tokens_per_second = 0;
  std::string params_blake2b;  // hex digest of the final parameter arena
  std::string checkpoint;      // the file written at exit, if any
};

// Trains as `config` says. Stops early, after finishing the current step and writing the
// checkpoint, when `stop` becomes true (e.g. from a SIGINT handler). Throws loco::Error for bad
// options, unreadable data or a checkpoint that does not match the run.
TrainSummary run_training(const TrainConfig& config, const std::atomic<bool>* stop = nullptr);

// What loco-train prints at the end: what was trained and how fast, the losses, the parameters'
// hash and the checkpoint. A run resumed at its last step says it had nothing to do and gives the
// checkpoint's own figures (its validation loss and hash), not a loss or a speed of no steps.
std::string describe(const TrainSummary& summary, const TrainConfig& config);

}  // namespace loco::train
