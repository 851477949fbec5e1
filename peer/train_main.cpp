// loco-train: trains one model alone, in one process (the inner loop of every peer).
//   loco-train --config configs/tiny.toml [--resume CHECKPOINT] [--section.key VALUE ...]
// Progress goes to stderr (the log); a summary of the run goes to stdout.

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "loco/cli/app.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/train/train_config.hpp"
#include "loco/train/trainer.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void request_stop(int) {
  g_stop.store(true);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loco-train: trains a model alone, in one process"};
  app.name("loco-train");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  loco::train::TrainConfig config;
  loco::cli::add_train_options(app, config);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;
  loco::init_logging(common.log_level, common.log_format);

  // Ctrl-C finishes the current step and writes the checkpoint before exiting.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  try {
    const loco::train::TrainSummary s = loco::train::run_training(config, &g_stop);
    std::printf("trained %s with %zu parameters: steps %llu..%llu in %.1f s (%.0f tokens/s)\n",
                config.model.kind.c_str(), s.parameters,
                static_cast<unsigned long long>(s.start_step),
                static_cast<unsigned long long>(s.end_step), s.seconds, s.tokens_per_second);
    std::printf("final train loss %.4f, validation loss %.4f", s.train_loss,
                s.val_loss.value_or(0));
    if (s.entropy_floor) {
      std::printf(", entropy floor %.4f (validation %+.1f%% above it)", *s.entropy_floor,
                  100.0 * (s.val_loss.value_or(0) / *s.entropy_floor - 1.0));
    }
    std::printf("\nparameters blake2b %s\n", s.params_blake2b.c_str());
    if (!s.checkpoint.empty()) std::printf("checkpoint %s\n", s.checkpoint.c_str());
    return 0;
  } catch (const loco::Error& e) {
    spdlog::error("loco-train: {}", e.what());  // what() starts with the category
    return 1;
  }
}
