#include "loco/host/peer_options.hpp"

#include "loco/cli/app.hpp"

namespace loco::host {

void add_peer_options(CLI::App& app, PeerOptions& o) {
  const auto add = [&app](const char* name, auto& field, const char* help) {
    app.add_option(name, field, help)->capture_default_str();
  };
  const auto add_path = [&app](const char* name, std::string& path, const char* help) {
    cli::add_path_option(app, name, path, help);
  };
  add_path("--peer.key", o.key_file, "This peer's identity key file (keygen)");
  add("--peer.listen", o.listen, "Where the other peers connect to this one (host:port; 0: any)");
  add("--peer.advertise", o.advertise,
      "How the other peers reach this one, if not the listen address (host:port)");
  add("--peer.port-mapping", o.port_mapping,
      "Ask the home router to forward the listening port (UPnP-IGD), unless --peer.advertise is "
      "given; renewed while the peer runs, removed when it stops");
  add("--peer.relay-pairs", o.relay_pairs,
      "When reachable: how many links between two unreachable members this peer relays at once "
      "(0: none); it forwards their encrypted bytes and cannot read them");
  add("--peer.relay-mib-per-attempt", o.relay_mib_per_attempt,
      "When relaying: at most this many MiB forwarded per round attempt (0: no limit)");
  add("--peer.upload", o.upload, "This peer's upload bandwidth, declared to the tracker");
  add_path("--peer.checkpoint", o.checkpoint, "This peer's checkpoint: resumed from, written to");
  add("--peer.checkpoint-rounds", o.checkpoint_rounds, "Rounds between checkpoints");
  add("--peer.streams", o.streams, "Parallel TCP streams to each other peer (1-16)");
  add("--peer.threads", o.threads, "Compute threads (0: the run config's train.threads)");
  add_path("--peer.dataset", o.dataset,
           "Folder holding the run's dataset (its manifest.txt), if not the run config's "
           "data.manifest; every shard is checked against the run's manifest-hash");
  add_path("--peer.data-cache", o.data_cache,
           "Folder a peer fetches the run's dataset into from its data.mirrors (when it has no "
           "--peer.dataset); each file checked against the manifest before it is used");
  add_path("--peer.data-ca-file", o.data_ca_file,
           "A PEM file of the CA certificates https:// data.mirrors must chain to (a mirror with "
           "its own CA), instead of the system's store");
  add("--peer.data-cache-mib", o.data_cache_mib,
      "The data cache's cap in MiB: a larger dataset is refused before a byte is fetched");
  add("--peer.data-retry", o.data_retry,
      "How often a train shard no source gave is tried again (the peer trains on what it holds)");
  add("--peer.data-serve-rate", o.data_serve_rate,
      "At most this much of the upstream goes to serving train shards to the other peers (e.g. "
      "\"1MB/s\", \"8Mbit\"; \"unlimited\" or 0: no cap); a request past it is refused as busy "
      "and its asker asks its next source");
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
  add("--peer.seed-after-end", o.seed_after_end,
      "Once the run ended, how long to stay and serve its final model to others (loco-peer "
      "fetch-model) before leaving, e.g. \"30min\" (a signal ends it sooner); 0: leave at once");
  add("--run.id", o.run_id, "The training run's id, as the tracker has it");
  add_path(
      "--run.config", o.run_config,
      "The run's loco-train config (model, data, [strategy] kind = diloco), as the tracker has it");
  add("--tracker.address", o.tracker_address,
      "The tracker's host:port (replicas: host:port,host:port,..., tried in turn)");
  add("--tracker.public-key", o.tracker_public_key,
      "The tracker's public key (64 hex digits; replicas share it): only that key is accepted");
  add("--tracker.join-token", o.join_token, "The run's join token, if it has one");
  cli::add_link_options(app, o.link);
}

}  // namespace loco::host
