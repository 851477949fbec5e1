#pragma once
// The run folder of a local swarm (loco-swarm): the tracker's and each peer's identity key, the
// config file of each process, and their logs. Everything a process is started with is a file
// here, so one process can be run again by hand: `loco-peer --config FOLDER/peer-2.toml`.
//
//   tracker.key  tracker.toml  tracker.log
//   peer-1.key   peer-1.toml   peer-1.log   (and so on for each peer)
//
// Keys are kept between runs (a peer keeps its identity); configs and logs are rewritten.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "loco/cli/link_options.hpp"

namespace loco::peer {

// What loco-swarm was asked to run, checked.
struct SwarmPlan {
  std::uint32_t peers = 4;
  std::uint32_t min_peers = 1;  // a round needs this many ready peers
  std::string run_id = "local-swarm";
  std::filesystem::path run_config;     // the loco-train config of the run (absolute)
  std::filesystem::path folder;         // the run folder
  std::string status = "127.0.0.1:0";   // the tracker's status page ("": none)
  std::vector<cli::LinkOptions> links;  // one per peer
};

struct SwarmFolder {
  struct Files {
    std::filesystem::path config;
    std::filesystem::path log;
  };
  std::filesystem::path root;
  Files tracker;
  std::vector<Files> peers;  // peer i + 1 at index i
};

// Creates the folder, the keys that are missing and the tracker's config. Throws Error(io).
SwarmFolder make_swarm_folder(const SwarmPlan& plan);

// Writes each peer's config, for a tracker listening at `tracker_address` with `tracker_key`
// (hex), as it printed them when it started.
void write_peer_configs(const SwarmPlan& plan, const SwarmFolder& folder,
                        const std::string& tracker_address, const std::string& tracker_key);

}  // namespace loco::peer
