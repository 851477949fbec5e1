// loco-peer: a volunteer's training process. Thin: options, wiring, signals.

#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>

#include "check_tracker.hpp"
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
  const auto add = [&app](const char* name, auto& field, const char* help) {
    app.add_option(name, field, help)->capture_default_str();
  };
  const auto add_path = [&app](const char* name, std::string& path, const char* help) {
    loco::cli::add_path_option(app, name, path, help);
  };
  add_path("--peer.key", o.key_file, "This peer's identity key file (keygen)");
  add("--peer.listen", o.listen, "Where the other peers connect to this one (host:port; 0: any)");
  add("--peer.advertise", o.advertise,
      "How the other peers reach this one, if not the listen address (host:port)");
  add("--peer.upload", o.upload, "This peer's upload bandwidth, declared to the tracker");
  add_path("--peer.checkpoint", o.checkpoint, "This peer's checkpoint: resumed from, written to");
  add("--peer.checkpoint-rounds", o.checkpoint_rounds, "Rounds between checkpoints");
  add("--peer.streams", o.streams, "Parallel TCP streams to each other peer (1-16)");
  add("--peer.threads", o.threads, "Compute threads (0: the run config's train.threads)");
  add("--peer.max-handshakes", o.max_handshakes, "Connections in their handshake at once");
  add("--peer.max-per-address", o.max_per_address,
      "Connections from one address not yet admitted (handshake or hello)");
  add("--peer.handshake-timeout", o.handshake_timeout,
      "A connection whose handshake is not done this long after accept is closed");
  add("--peer.idle-timeout", o.idle_timeout,
      "A link to another peer silent this long ends (keepalives go every third of it)");
  add("--peer.gossip-wait", o.gossip_wait,
      "Gossip mode: a group not done this long after this peer is ready (once most peers are at "
      "its round), and it applies alone");
  add("--peer.end-wait", o.end_wait,
      "At the run's final round: how long to wait for the tracker to hold the final state before "
      "leaving");
  app.add_option("--debug.poison", o.poison,
                 "For the test suite only: scale (send a 1000x update) or nan (declare a NaN one)")
      ->group("");  // hidden from --help
  loco::peer::add_debug_fault_options(app, o.debug);
  add("--run.id", o.run_id, "The training run's id, as the tracker has it");
  add_path(
      "--run.config", o.run_config,
      "The run's loco-train config (model, data, [strategy] kind = diloco), as the tracker has it");
  add("--tracker.address", o.tracker_address, "The tracker's host:port");
  add("--tracker.public-key", o.tracker_public_key,
      "The tracker's public key (64 hex digits): only that key is accepted");
  add("--tracker.join-token", o.join_token, "The run's join token, if it has one");
  loco::cli::add_link_options(app, o.link);
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
  // A signal finishes the current step, leaves the run and writes the checkpoint.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  return loco::peer::run_peer(peer, g_stop);
}
