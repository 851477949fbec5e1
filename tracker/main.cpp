// loco-tracker: admits peers, tracks membership and forms rounds. Thin: options and wiring.

#include <spdlog/spdlog.h>

#include "loco/cli/app.hpp"
#include "loco/cli/keygen.hpp"
#include "loco/core/log.hpp"
#include "loco/version.hpp"
#include "serve.hpp"

int main(int argc, char** argv) {
  CLI::App app{"loco-tracker: admits loco peers to a training run and forms their rounds"};
  app.name("loco-tracker");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  loco::cli::KeygenOptions keygen;
  loco::cli::add_keygen_command(app, keygen, loco::secure::KeyOwner::tracker);
  loco::tracker::TrackerOptions tracker;
  loco::tracker::add_tracker_options(app, tracker);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  loco::init_logging(common.log_level, common.log_format);
  if (keygen.command->parsed()) return loco::cli::run_keygen(keygen);
  spdlog::info("loco-tracker {}", loco::kVersion);
  return loco::tracker::serve(tracker);
}
