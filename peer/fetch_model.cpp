#include "fetch_model.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "loco/checkpoint/atomic_file.hpp"
#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"
#include "loco/net/host_port.hpp"
#include "loco/net/units.hpp"
#include "loco/round/swarm_group.hpp"
#include "loco/swarm/swarm_thread.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/model_file.hpp"

namespace loco::peer {
namespace {

// How long the tracker may take to answer the join.
constexpr Duration kTrackerPatience = std::chrono::seconds(60);

// The peer's options as a member that only fetches: any free port on the listen address's host
// (this machine's peer may hold the configured one, and [peer] advertise names it), no mapping
// asked of the router (the fetch dials its donors), nothing relayed for others.
host::PeerOptions fetcher_options(host::PeerOptions o) {
  net::HostPort listen = net::parse_host_port(o.listen, /*allow_any_port=*/true);
  listen.port = 0;
  o.listen = net::to_string(listen);
  o.advertise.clear();
  o.port_mapping = false;
  o.relay_pairs = 0;
  return o;
}

// "peer 1a2b3c4d, peer 5e6f7a8b" or "the tracker's custody copy".
std::string sources(const std::vector<secure::PublicKey>& donors,
                    const secure::PublicKey& tracker) {
  std::string out;
  for (const secure::PublicKey& d : donors) {
    if (!out.empty()) out += ", ";
    out += d == tracker ? "the tracker's custody copy" : "peer " + secure::short_id(d);
  }
  return out;
}

}  // namespace

CLI::App* add_fetch_model_command(CLI::App& app, FetchModelOptions& o) {
  CLI::App* command = app.add_subcommand(
      "fetch-model",
      "Fetch the run's model (its final state, or its newest committed one) from the peers that "
      "hold it, check it against the committed hash, write it as safetensors, and exit");
  command->fallthrough();  // the peer's options (--config) may follow the subcommand
  cli::add_path_option(*command, "--out", o.out, "The file to write")->required();
  cli::add_path_option(*command, "--key", o.key_file,
                       "Join with this key file (a run that admits listed keys only); default: a "
                       "key made for this fetch, never [peer] key, whose peer it would replace");
  command
      ->add_option("--patience", o.patience,
                   "How long the fetch may take once the tracker answered")
      ->capture_default_str();
  return command;
}

int fetch_model(const host::PeerOptions& peer, const FetchModelOptions& f,
                const std::atomic<bool>& stop) {
  try {
    const host::PeerOptions o = fetcher_options(peer);
    const Duration patience = net::parse_duration(f.patience, "--patience", std::chrono::hours(24));
    const train::TrainConfig config = host::load_run_config(o);
    if (config.strategy.gossip_group != 0)
      throw Error(ErrorCategory::config,
                  "this run is in gossip mode: it commits no shared state, so there is no model "
                  "to fetch (each peer's checkpoint holds its own)");
    const secure::KeyPair key = f.key_file.empty()
                                    ? secure::KeyPair::generate()
                                    : secure::read_key_file(f.key_file, secure::KeyOwner::peer);
    swarm::SwarmConfig swarm = host::swarm_config(o, config);
    const secure::PublicKey tracker = swarm.tracker_key;
    train::SharedState state = train::genesis_state(config);
    const proto::StateManifest genesis = state.manifest();
    round::SwarmGroup group(std::make_unique<swarm::SwarmThread>(std::move(swarm), key), &stop);
    group.bind(state);
    const round::JoinOutcome joined =
        group.join(genesis, /*at_genesis=*/true, kTrackerPatience, patience);
    if (joined.stopped) throw Error(ErrorCategory::network, "stopped by a signal: nothing written");
    if (!joined.fetched)
      throw Error(ErrorCategory::protocol,
                  "the run has committed no round yet: its model is still its initial state "
                  "(`loco-train --write-genesis` writes it)");
    const train::ModelFile model =
        train::model_file(state, group.state_hash(), o.run_id, o.run_config);
    group.leave("fetched the model");
    const std::span<const std::byte> parts[] = {model.bytes};
    checkpoint::write_file_atomically(f.out, parts);
    const std::uint64_t final_round = joined.reply.final_round;
    const std::string which = final_round == 0 ? "newest committed; the run declares no end"
                              : model.round >= final_round
                                  ? "its final round"
                                  : fmt::format("newest committed; final round {}", final_round);
    std::printf(
        "fetched round %llu of run %s (%s) from %s: state %s, %zu parameters, %s "
        "(BLAKE2b-256 %s)\n",
        static_cast<unsigned long long>(model.round), o.run_id.c_str(), which.c_str(),
        sources(joined.donors, tracker).c_str(), model.state_hash.substr(0, 16).c_str(),
        model.parameters, f.out.c_str(), to_hex(blake2b(model.bytes)).c_str());
    std::fflush(stdout);
    return 0;
  } catch (const Error& e) {
    spdlog::error("fetch-model: {}", e.what());
    return 1;
  }
}

}  // namespace loco::peer
