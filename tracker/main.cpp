// loco-tracker: admits peers, tracks membership and forms rounds. Thin: options and wiring.

#include <spdlog/spdlog.h>

#include <cstdio>

#include "loco/cli/app.hpp"
#include "loco/cli/keygen.hpp"
#include "loco/core/error.hpp"
#include "loco/core/log.hpp"
#include "loco/version.hpp"
#include "model_export.hpp"
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
  loco::tracker::ExportOptions exported;
  CLI::App* export_command = app.add_subcommand(
      "export",
      "Write the run's model (a custody copy's parameters, nanoGPT's names) as safetensors, and "
      "exit");
  export_command->fallthrough();  // the tracker's options (--config) may follow the subcommand
  loco::cli::add_path_option(*export_command, "--out", exported.out, "The file to write")
      ->required();
  export_command->add_option("--round", exported.round,
                             "The committed round to export (default: the newest copy held)");
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  loco::init_logging(common.log_level, common.log_format);
  if (keygen.command->parsed()) return loco::cli::run_keygen(keygen);
  if (export_command->parsed()) {
    try {
      const loco::tracker::ExportedModel model = loco::tracker::export_model(tracker, exported);
      std::printf("exported round %llu of run %s (state %s, %zu parameters) to %s\n",
                  static_cast<unsigned long long>(model.round), tracker.run_id.c_str(),
                  model.state_hash.substr(0, 12).c_str(), model.parameters, exported.out.c_str());
      return 0;
    } catch (const loco::Error& e) {
      spdlog::error("export: {}", e.what());
      return 1;
    }
  }
  spdlog::info("loco-tracker {}", loco::kVersion);
  return loco::tracker::serve(tracker);
}
