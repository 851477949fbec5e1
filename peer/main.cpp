// loco-peer: a volunteer's training process. Thin: options, wiring, progress.

#include <spdlog/spdlog.h>

#include "loco/cli/app.hpp"
#include "loco/core/log.hpp"
#include "loco/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"loco-peer: trains a shared model with other volunteers over the internet"};
  app.name("loco-peer");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  loco::init_logging(common.log_level, common.log_format);
  spdlog::error("loco-peer {}: joining a swarm is not implemented yet; train alone with loco-train",
                loco::kVersion);
  return 1;
}
