#pragma once
// loco-tracker's options: every one a flag --section.key and a key of the config file
// (configs/tracker.toml shows them all). The raw values are checked when CLI11 parses them and
// turned into the core's config by to_core_config().

#include <cstdint>
#include <string>
#include <vector>

#include "buffer_caps.hpp"
#include "custody_store.hpp"
#include "loco/net/listener_limits.hpp"
#include "loco/proto/tracker_config.hpp"
#include "model_download.hpp"

namespace CLI {
class App;
}

namespace loco::tracker {

struct TrackerOptions {
  // [tracker]: this server
  std::string listen = "0.0.0.0:7700";
  std::string key_file;
  std::string state_file = "loco-tracker.state";  // "" keeps the state in memory only
  // Tracker replicas (replica.hpp): etcd's members ("http://host:port,..."; "": one tracker, its
  // state in state_file), this replica's name, and its election lease.
  std::string etcd;
  std::string replica;
  std::string etcd_lease = "3s";
  std::string http = "127.0.0.1:7780";  // the status page, /status and /metrics ("": none)
  // What the listener takes on at once (net/listener_limits.hpp); a source is an address.
  std::size_t max_handshakes = net::ListenerLimits::tracker_defaults().max_handshakes;
  std::size_t max_waiting = net::ListenerLimits::tracker_defaults().max_waiting;
  std::size_t max_connections = net::ListenerLimits::tracker_defaults().max_admitted;
  std::size_t max_per_address = net::ListenerLimits::tracker_defaults().max_pending_per_source;
  std::size_t max_connections_per_address =
      net::ListenerLimits::tracker_defaults().max_admitted_per_source;
  std::string handshake_timeout = "5s";  // as tracker_defaults()
  std::string bundle_timeout = "10s";
  std::string join_deadline = "10s";  // admitted, and not joined: closed
  std::uint32_t max_members_per_address = 4;
  std::string bar_time = "600s";
  double message_rate = 50;
  std::uint32_t message_burst = 500;
  // Checkpoint custody: copies of the run's state in <state-file>.custody/ (docs/TRACKER.md).
  std::uint32_t custody_every = 10;  // rounds; 0: off
  std::uint32_t custody_keep = 3;
  std::string custody_max_state = "64MiB";  // a larger state is not pulled
  std::string custody_max_bytes = "1GiB";   // disk budget of the copies
  std::string custody_bandwidth = "unlimited";
  // Bytes one admitted connection may make the tracker hold for its partial messages (and the
  // largest frame it may send), before its peer has joined (a join request) and after.
  std::uint64_t max_buffer_joining = net::ListenerLimits::tracker_defaults().max_buffered_bytes;
  std::uint64_t max_buffer_member = std::uint64_t{16} << 10;
  // GET /model.safetensors on the status server (model_download.hpp): copies written at once, one
  // per address, and the rate below which a download is cut off.
  std::size_t model_downloads = DownloadLimits{}.max_downloads;
  std::string model_download_floor = "256kbit";
  // GET /dataset/<name> (dataset_files.hpp): the folder served ("": none) and the downloads
  // written at once (at the model's floor rate).
  std::string dataset;
  std::size_t dataset_downloads = 16;
  // [run]: the training run it coordinates
  std::string run_id;
  std::string run_config;  // the loco-train config every peer of the run trains with
  std::uint32_t min_peers = 1;
  std::uint32_t shard_count = 64;
  std::string heartbeat_interval = "2s";
  std::string eviction_timeout = "10s";
  std::string join_timeout = "30s";
  std::string restart_grace = "5s";
  std::string round_timeout = "300s";
  std::string report_grace = "10s";
  std::string accusation_grace = "2s";
  std::string judge_grace = "40s";
  std::uint32_t accusation_bench = 10;
  std::uint32_t wait_rounds = 3;
  std::uint32_t max_relayed_links = 0;
  std::uint32_t max_attempts = 8;
  float update_norm_limit = 10.0f;
  float trim = 0.25f;
  bool check_owners = true;
  std::uint32_t donors = 3;
  // [admission]: who may join
  std::string admission = "token";  // token | allowlist | open
  std::string join_token;
  std::vector<std::string> allowed_keys;  // hex public keys
};

void add_tracker_options(CLI::App& app, TrackerOptions& options);

// Throws Error(config) naming the option that is missing or wrong.
proto::TrackerCoreConfig to_core_config(const TrackerOptions& options);
net::ListenerLimits to_listener_limits(const TrackerOptions& options);
CustodyLimits to_custody_limits(const TrackerOptions& options);
BufferCaps to_buffer_caps(const TrackerOptions& options);
DownloadLimits to_download_limits(const TrackerOptions& options);

}  // namespace loco::tracker
