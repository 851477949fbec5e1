// loco-peer: a volunteer's training process. Thin: options, wiring, progress.

#include <spdlog/spdlog.h>

#include "check_tracker.hpp"
#include "loco/cli/app.hpp"
#include "loco/cli/keygen.hpp"
#include "loco/core/log.hpp"
#include "loco/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"loco-peer: trains a shared model with other volunteers over the internet"};
  app.name("loco-peer");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  loco::cli::KeygenOptions keygen;
  loco::cli::add_keygen_command(app, keygen);
  loco::peer::TrackerLinkOptions tracker;
  loco::cli::add_path_option(app, "--peer.key", tracker.key_file,
                             "This peer's identity key file (keygen)");
  app.add_option("--run.id", tracker.run_id, "The training run's id, as the tracker has it");
  app.add_option("--tracker.address", tracker.tracker_address, "The tracker's host:port");
  app.add_option("--tracker.public-key", tracker.tracker_public_key,
                 "The tracker's public key (64 hex digits): only that key is accepted");
  CLI::App* check = app.add_subcommand(
      "check-tracker", "Connect to the tracker, verify its pinned key and the run id, and exit");
  check->fallthrough();  // the options above may follow the subcommand
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  loco::init_logging(common.log_level, common.log_format);
  if (keygen.command->parsed()) return loco::cli::run_keygen(keygen);
  if (check->parsed()) return loco::peer::check_tracker(tracker);
  spdlog::error("loco-peer {}: joining a swarm is not implemented yet; train alone with loco-train",
                loco::kVersion);
  return 1;
}
