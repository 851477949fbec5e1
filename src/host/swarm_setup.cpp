// host/peer_options.hpp: the run's config and the SwarmConfig, from a peer's options.
#include <fmt/format.h>

#include <chrono>

#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/time.hpp"
#include "loco/host/peer_options.hpp"
#include "loco/net/link_shaper.hpp"
#include "loco/net/units.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/swarm/swarm_session.hpp"
#include "loco/train/run_settings.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::host {

train::TrainConfig load_run_config(const PeerOptions& o) {
  if (o.run_config.empty())
    throw Error(ErrorCategory::config,
                fmt::format("--run.config: name the run's loco-train config (model, data, "
                            "[strategy] kind = {}), the one the tracker was given",
                            train::strategy_names(&train::StrategyRow::over_swarm, '"')));
  train::TrainConfig config = cli::load_train_config(o.run_config);
  train::check_swarm_strategy(config, o.run_config);
  train::apply_swarm_defaults(config);
  if (o.threads > 0) config.train.threads = o.threads;
  if (!o.dataset.empty()) {
    if (config.data.source != "dataset")
      throw Error(ErrorCategory::config, "--peer.dataset: the run's data.source is '" +
                                             config.data.source + "', not a dataset");
    config.data.manifest = o.dataset;  // a folder: its manifest.txt
  }
  return config;
}

swarm::SwarmConfig swarm_config(const PeerOptions& o, const train::TrainConfig& config) {
  if (o.tracker_address.empty())
    throw Error(ErrorCategory::config, "--tracker.address: the tracker's host:port");
  if (o.run_id.empty()) throw Error(ErrorCategory::config, "--run.id: the run's id");
  swarm::SwarmConfig s;
  s.run_id = o.run_id;
  try {
    s.tracker_key = secure::parse_public_key(o.tracker_public_key);
  } catch (const Error& e) {
    throw Error(ErrorCategory::config, "--tracker.public-key: " + e.message());
  }
  s.tracker_address = o.tracker_address;
  s.listen = o.listen;
  s.advertise = o.advertise;
  s.port_mapping = o.port_mapping;
  s.relay = proto::RelayBudget{.max_pairs = o.relay_pairs,
                               .max_bytes_per_attempt = o.relay_mib_per_attempt << 20};
  s.upload_bps = net::parse_bandwidth(o.upload, "--peer.upload");
  s.serve.bytes_per_second = net::parse_bandwidth(o.data_serve_rate, "--peer.data-serve-rate") / 8;
  s.credential = o.join_token;
  s.settings = train::run_settings(config);
  s.codec = train::swarm_codec(config);
  s.all_reduce = proto::parse_all_reduce_algorithm(config.strategy.all_reduce);
  s.gossip_group = config.strategy.gossip_group;
  s.threads = config.train.threads;
  s.gossip_wait = net::parse_duration(o.gossip_wait, "--peer.gossip-wait", std::chrono::hours(1));
  s.bundle = net::BundleConfig{.streams = o.streams, .unit_bytes = 256 << 10};
  const link::LinkSettings link = cli::to_link_settings(o.link);
  if (!link.is_transparent())
    s.link = net::LinkShaper::create(link, from_steady(std::chrono::steady_clock::now()));
  s.idle_timeout =
      net::parse_duration(o.idle_timeout, "--peer.idle-timeout", std::chrono::hours(24));
  s.listener_limits.max_handshakes = o.max_handshakes;
  s.listener_limits.max_pending_per_source = o.max_per_address;
  s.listener_limits.handshake_timeout =
      net::parse_duration(o.handshake_timeout, "--peer.handshake-timeout", std::chrono::hours(1));
  try {
    net::validate(s.listener_limits);
  } catch (const Error& e) {
    throw Error(
        ErrorCategory::config,
        "--peer.max-handshakes, --peer.max-per-address, --peer.handshake-timeout: " + e.message());
  }
  return s;
}

}  // namespace loco::host
