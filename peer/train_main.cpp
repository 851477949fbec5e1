// loco-train: trains one model alone, in one process (the inner loop of every peer).
//   loco-train --config configs/tiny.toml [--resume CHECKPOINT] [--section.key VALUE ...]
//   loco-train --config configs/tiny.toml --write-genesis genesis.safetensors
//       writes the model's genesis file (its initial parameters) and the run config lines that
//       name it ([model] kind = "external"), and trains nothing
// Progress goes to stderr (the log); a summary of the run goes to stdout.

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "loco/cli/app.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/genesis_file.hpp"
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
  std::string genesis;
  loco::cli::add_path_option(app, "--write-genesis", genesis,
                             "Write the model's genesis file (its tensors and initial values) "
                             "here, print the run config lines that name it, and exit");
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;
  loco::init_logging(common.log_level, common.log_format);

  // Ctrl-C finishes the current step and writes the checkpoint before exiting.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  try {
    if (!genesis.empty()) {
      config.validate();
      const std::string hash = loco::train::write_model_genesis(config, genesis);
      std::fputs(loco::train::genesis_config_lines(genesis, hash).c_str(), stdout);
      return 0;
    }
    const loco::train::TrainSummary s = loco::train::run_training(config, &g_stop);
    std::fputs(loco::train::describe(s, config).c_str(), stdout);
    return 0;
  } catch (const loco::Error& e) {
    spdlog::error("loco-train: {}", e.what());  // what() starts with the category
    return 1;
  }
}
