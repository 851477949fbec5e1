// loco-peer: a volunteer's training process. Thin: options, wiring, signals.

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>

#include "check_tracker.hpp"
#include "fetch_model.hpp"
#include "loco/cli/app.hpp"
#include "loco/cli/keygen.hpp"
#include "loco/core/log.hpp"
#include "loco/version.hpp"
#include "swarm_peer.hpp"

namespace {

std::atomic<bool> g_stop{false};

extern "C" void request_stop(int) {
  g_stop.store(true);
}

void add_peer_options(CLI::App& app, loco::peer::PeerOptions& o) {
  loco::host::add_peer_options(app, o);
  app.add_option("--debug.poison", o.poison,
                 "For the test suite only: scale (send a 1000x update), segment (spoil the one "
                 "owner's segment that holds its first value), nan (declare a NaN norm) or tokens "
                 "(claim 2^30 times the tokens trained on)")
      ->group("");  // hidden from --help
  loco::peer::add_debug_fault_options(app, o.debug);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"loco-peer: trains a shared model with other volunteers over the internet"};
  app.name("loco-peer");
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  loco::cli::KeygenOptions keygen;
  loco::cli::add_keygen_command(app, keygen, loco::secure::KeyOwner::peer);
  loco::peer::PeerOptions peer;
  add_peer_options(app, peer);
  CLI::App* check = app.add_subcommand(
      "check-tracker", "Connect to the tracker, verify its pinned key and the run id, and exit");
  check->fallthrough();  // the options above may follow the subcommand
  loco::peer::FetchModelOptions fetch;
  CLI::App* fetch_command = loco::peer::add_fetch_model_command(app, fetch);
  if (auto exit_code = loco::cli::parse(app, argc, argv)) return *exit_code;

  loco::init_logging(common.log_level, common.log_format);
  if (keygen.command->parsed()) return loco::cli::run_keygen(keygen);
  if (check->parsed())
    return loco::peer::check_tracker(
        loco::peer::TrackerLinkOptions{.key_file = peer.key_file,
                                       .run_id = peer.run_id,
                                       .tracker_address = peer.tracker_address,
                                       .tracker_public_key = peer.tracker_public_key});
  spdlog::info("loco-peer {}", loco::kVersion);
  // A signal finishes the current step, leaves the run and writes the checkpoint (fetch-model:
  // leaves, nothing written).
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  if (fetch_command->parsed()) return loco::peer::fetch_model(peer, fetch, g_stop);
  return loco::peer::run_peer(peer, g_stop);
}
