#pragma once
// A peer's options, as loco-peer reads them (flags --section.key and the keys of its TOML config
// file, configs/peer.toml) and as the C API reads the same file (loco/loco.h): one config serves
// both kinds of peer. From them, the run's config and the swarm's SwarmConfig.
// Test-only options (loco-peer's --debug.*) are loco-peer's own, not here.

#include <cstdint>
#include <memory>
#include <string>

#include "loco/cli/link_options.hpp"
#include "loco/net/listener_limits.hpp"

// Declared only: this header is included where options are parsed (CLI11 is slow enough).
namespace CLI {
class App;
}
namespace loco::swarm {
struct SwarmConfig;
}
namespace loco::train {
struct TrainConfig;
}
namespace loco::fetch {
class ShardFeed;
}

namespace loco::host {

struct PeerOptions {
  // [peer]
  std::string key_file;
  std::string listen = "127.0.0.1:0";  // where other peers connect (port 0: any)
  std::string advertise;               // how others reach it, if not the listen address
  bool port_mapping = true;            // ask the home router to forward the port (UPnP)
  // What it relays for pairs of unreachable members when reachable (proto/relay_core.hpp).
  std::uint32_t relay_pairs = 4;
  std::uint64_t relay_mib_per_attempt = 0;  // 0: no limit
  std::string upload = "100Mbit";           // declared to the tracker (ring order)
  std::string checkpoint;                   // this peer's checkpoint: resume from it, write it
  std::uint64_t checkpoint_rounds = 10;
  std::uint32_t streams = 1;  // parallel TCP streams per peer pair
  int threads = 0;            // compute threads (0: the run config's)
  // The folder holding the run's dataset (its manifest.txt), if not where the run config's
  // data.manifest says: the organiser's path need not be the volunteer's. Sets data.manifest.
  std::string dataset;
  // Where a peer without --peer.dataset fetches the run's dataset to, from the run config's
  // data.mirrors (loco/fetch/dataset_fetch.hpp), and that folder's cap. Empty: no fetching.
  std::string data_cache;
  std::uint64_t data_cache_mib = 65536;
  // A PEM file of the CA certificates https:// mirrors must chain to; empty: the system's store.
  std::string data_ca_file;
  // How often a train shard no source gave is tried again while the peer trains on what it holds
  // (fetch/shard_feed.hpp).
  std::string data_retry = "30s";
  // What serving train shards to the other members may take of this peer's upstream, over every
  // asker ("unlimited" or "0": no cap; proto/shard_serve_gate.hpp). 1 MB/s is 8 Mbit: a home
  // uplink of 20 Mbit keeps more than half for its rounds, and a shard of 2 MiB (loco-prepare's
  // default of 2^20 uint16 tokens) is served in about 2 s.
  std::string data_serve_rate = "1MB/s";
  // What this peer's listener takes on at once; the other caps are ListenerLimits::peer_defaults
  std::size_t max_handshakes = net::ListenerLimits::peer_defaults().max_handshakes;
  std::size_t max_per_address = net::ListenerLimits::peer_defaults().max_pending_per_source;
  std::string handshake_timeout = "5s";
  std::string idle_timeout = "300s";  // links between peers: keepalives every third of it
  std::string gossip_wait = "600s";   // gossip mode: a group not done by then, alone
  // At the run's final round: how long to wait for the tracker to hold its state before leaving.
  std::string end_wait = "120s";
  // Once the run ended: how long this peer stays to serve the final state to others
  // (`loco-peer fetch-model`, late peers) before it leaves; "0": it leaves at once.
  std::string seed_after_end = "0";
  // [run]
  std::string run_id;
  std::string run_config;  // the loco-train config of the run (model, data, DiLoCo)
  // [tracker]
  std::string tracker_address;
  std::string tracker_public_key;
  std::string join_token;
  // [link]: WAN emulation of this peer's own connections
  cli::LinkOptions link;
};

// Registers the options on `app`, bound to the fields of `options`.
void add_peer_options(CLI::App& app, PeerOptions& options);

// The run's loco-train config (options.run_config), with options.threads and options.dataset
// applied. Throws
// Error(config) when it is missing, unreadable, or its strategy cannot train over a swarm.
train::TrainConfig load_run_config(const PeerOptions& options);

// With options.data_cache set and no options.dataset: the feed of the peer's data shard, the
// manifest, tokenizer model and validation shards fetched (loco-peer, and a trainer peer of the C
// API: fetch/shard_feed.hpp).
// Null when the peer does not fetch its data. Throws as fetch::ShardFeed.
std::unique_ptr<fetch::ShardFeed> start_data_feed(const PeerOptions& options,
                                                  const train::TrainConfig& config);

// The swarm's settings from the options and the run's config. Throws Error(config) naming the
// option at fault.
swarm::SwarmConfig swarm_config(const PeerOptions& options, const train::TrainConfig& config);

}  // namespace loco::host
