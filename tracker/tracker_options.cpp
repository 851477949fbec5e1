#include "tracker_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "loco/cli/app.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/net/units.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/run_end.hpp"
#include "loco/train/run_settings.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "loco/train/timed_rounds.hpp"

namespace loco::tracker {
namespace {

constexpr Duration kMaxTimeout = std::chrono::hours(24);

Duration duration(const std::string& text, const char* option) {
  const Duration d = net::parse_duration(text, option, kMaxTimeout);
  if (d <= Duration::zero())
    throw Error(ErrorCategory::config, fmt::format("{} = \"{}\": must be positive", option, text));
  return d;
}

proto::AdmissionPolicy admission(const TrackerOptions& o) {
  proto::AdmissionPolicy policy;
  if (o.admission == "open") {
    policy.kind = proto::AdmissionPolicy::Kind::open;
  } else if (o.admission == "token") {
    policy.kind = proto::AdmissionPolicy::Kind::token;
    if (o.join_token.size() < 16)
      throw Error(ErrorCategory::config,
                  "--admission.join-token: a token run needs a join token of at least 16 "
                  "characters (e.g. `head -c 24 /dev/urandom | base64`), or choose "
                  "--admission.policy allowlist or open");
    policy.token = o.join_token;
  } else if (o.admission == "allowlist") {
    policy.kind = proto::AdmissionPolicy::Kind::allowlist;
    if (o.allowed_keys.empty())
      throw Error(ErrorCategory::config,
                  "--admission.allowed-keys: an allowlist run needs the public keys it admits");
    for (const std::string& hex : o.allowed_keys) {
      try {
        policy.allowed.push_back(secure::parse_public_key(hex));
      } catch (const Error& e) {
        throw Error(ErrorCategory::config, "--admission.allowed-keys: " + e.message());
      }
    }
  } else {
    throw Error(
        ErrorCategory::config,
        fmt::format("--admission.policy = \"{}\": choose token, allowlist or open", o.admission));
  }
  return policy;
}

}  // namespace

void add_tracker_options(CLI::App& app, TrackerOptions& o) {
  app.add_option("--tracker.http", o.http,
                 "Address of the status page, /status and /metrics (host:port; \"\": none)")
      ->capture_default_str();
  app.add_option("--tracker.listen", o.listen,
                 "Address to listen on for peers (host:port; port 0: any)")
      ->capture_default_str();
  const auto add_cap = [&app](const char* name, std::size_t& field, const char* help) {
    app.add_option(name, field, help)->capture_default_str()->check(CLI::Range(1, 1'000'000));
  };
  add_cap("--tracker.max-handshakes", o.max_handshakes,
          "Connections in their handshake at once, from every address");
  add_cap("--tracker.max-waiting", o.max_waiting,
          "Authenticated connections waiting for their hello at once");
  add_cap("--tracker.max-connections", o.max_connections, "Admitted connections at once");
  add_cap("--tracker.max-per-address", o.max_per_address,
          "Connections from one address (an IPv6 /64) in their handshake or waiting");
  add_cap("--tracker.max-connections-per-address", o.max_connections_per_address,
          "Admitted connections from one address (an IPv6 /64)");
  app.add_option("--tracker.max-buffer-joining", o.max_buffer_joining,
                 "Bytes a connection may make the tracker hold before its peer joined")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{64} << 10, std::uint64_t{16} << 20));
  app.add_option("--tracker.max-buffer-member", o.max_buffer_member,
                 "Bytes a member's connection may make the tracker hold")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{4} << 10, std::uint64_t{16} << 20));
  app.add_option("--tracker.handshake-timeout", o.handshake_timeout,
                 "A connection whose handshake is not done this long after accept is closed")
      ->capture_default_str();
  app.add_option("--tracker.bundle-timeout", o.bundle_timeout,
                 "A connection not admitted this long after accept (no hello) is closed")
      ->capture_default_str();
  app.add_option("--tracker.join-deadline", o.join_deadline,
                 "A connection whose peer has not joined this long after admission is closed")
      ->capture_default_str();
  app.add_option("--tracker.max-members-per-address", o.max_members_per_address,
                 "Members that may join from one address (an IPv6 /64): a household behind one "
                 "router; 0: no limit")
      ->capture_default_str()
      ->check(CLI::Range(0, 100'000));
  app.add_option("--tracker.bar-time", o.bar_time,
                 "A peer cut off for breaking the protocol may not join again for this long")
      ->capture_default_str();
  app.add_option("--tracker.message-rate", o.message_rate,
                 "Messages a second one connection may send once its burst is spent; past that "
                 "it is cut off (0: no limit)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--tracker.message-burst", o.message_burst,
                 "Messages one connection may send at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10'000'000u));
  app.add_option("--tracker.custody-every", o.custody_every,
                 "Every this many committed rounds the tracker pulls a copy of the run's state "
                 "from a peer, and the final round's at once (0: no custody)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--tracker.custody-keep", o.custody_keep, "Custody copies kept on disk")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tracker.custody-max-state", o.custody_max_state,
                 "A state larger than this is not pulled (custody is for small models)")
      ->capture_default_str();
  app.add_option("--tracker.custody-max-bytes", o.custody_max_bytes,
                 "Disk budget of the custody copies: the oldest are deleted to stay within it")
      ->capture_default_str();
  app.add_option("--tracker.custody-bandwidth", o.custody_bandwidth,
                 "Download rate a custody pull may use (e.g. 50Mbit; unlimited)")
      ->capture_default_str();
  app.add_option("--tracker.model-downloads", o.model_downloads,
                 "Copies of the model (/model.safetensors) written at once, one per address; "
                 "others wait in line")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tracker.dataset", o.dataset,
                 "A dataset folder (loco-prepare --out-dir) served on the status server as "
                 "/dataset/<name>, for peers to fetch (list it in the run's data.mirrors)")
      ->capture_default_str();
  app.add_option("--tracker.dataset-downloads", o.dataset_downloads,
                 "Dataset files written at once; more are asked to come back (503)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--tracker.model-download-floor", o.model_download_floor,
                 "A model download slower than this (e.g. 256kbit) is cut off, giving its place to "
                 "the next in line")
      ->capture_default_str();
  cli::add_path_option(app, "--tracker.key", o.key_file,
                       "The tracker's identity key file (keygen)");
  cli::add_path_option(
      app, "--tracker.state-file", o.state_file,
      "Where the run's state is saved, so a restart continues the run (\"\": memory "
      "only)")
      ->capture_default_str();
  app.add_option("--tracker.etcd", o.etcd,
                 "Run as one of several replicas: etcd's members, http://host:port,... (\"\": one "
                 "tracker with its state file)");
  app.add_option("--tracker.replica", o.replica,
                 "This replica's name in the log and the election (default: --tracker.listen)");
  app.add_option("--tracker.etcd-lease", o.etcd_lease,
                 "A replica's election lease: a leader gone this long is replaced")
      ->capture_default_str();
  app.add_option("--run.id", o.run_id, "The training run's id; every peer uses the same");
  cli::add_path_option(app, "--run.config", o.run_config,
                       "The loco-train config of the run (model, data, seed): peers must match it");
  app.add_option("--run.min-peers", o.min_peers, "A round needs at least this many peers")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  app.add_option("--run.shard-count", o.shard_count,
                 "Data shards; at most this many peers at once, each on its own shard")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000));
  app.add_option("--run.heartbeat-interval", o.heartbeat_interval,
                 "Peers send a heartbeat this often")
      ->capture_default_str();
  app.add_option("--run.eviction-timeout", o.eviction_timeout, "A peer silent this long is evicted")
      ->capture_default_str();
  app.add_option("--run.join-timeout", o.join_timeout,
                 "Without every peer ready, a round forms this long after the first is ready "
                 "(longer than a newcomer's state download)")
      ->capture_default_str();
  app.add_option("--run.restart-grace", o.restart_grace,
                 "Restarted from its state file, the tracker forms no round until the members of "
                 "its last saved view are back, or for this long at most (0s: no wait)")
      ->capture_default_str();
  app.add_option("--run.round-timeout", o.round_timeout,
                 "A group that has not finished its round in this time is aborted")
      ->capture_default_str();
  app.add_option("--run.report-grace", o.report_grace,
                 "Once a state holds a majority of the group, the others have this long to "
                 "report theirs before the round commits without them")
      ->capture_default_str();
  app.add_option("--run.accusation-grace", o.accusation_grace,
                 "A retry after a member names another waits this long to see the named one leave "
                 "(else both sit the retry out)")
      ->capture_default_str();
  app.add_option("--run.judge-grace", o.judge_grace,
                 "A dispute between a checked owner and its checker waits this long for its "
                 "judge's verdict (else the dispute is counted)")
      ->capture_default_str();
  app.add_option("--run.accusation-bench", o.accusation_bench,
                 "A member benched (an accusation no one confirmed, a second dispute) sits out "
                 "this many round attempts, twice as many each time again (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  app.add_option("--run.max-relayed-links", o.max_relayed_links,
                 "At most this many links between two unreachable members relayed in a round's "
                 "group (0: as many as the relays' budgets allow)")
      ->capture_default_str();
  app.add_option("--run.wait-rounds", o.wait_rounds,
                 "A member not ready (or still fetching) for this many rounds formed without it is "
                 "no longer waited for, until it takes part in a round again")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--run.max-attempts", o.max_attempts,
                 "Attempts per round before the peers go back to training")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--run.update-norm-limit", o.update_norm_limit,
                 "An update whose norm exceeds this multiple of the group's median is refused")
      ->capture_default_str()
      ->check(CLI::Range(1.0f, 1e6f));
  app.add_option(
         "--run.trim", o.trim,
         "The share of a group's updates the direct exchange leaves out of each coordinate's "
         "mean, from each side (a trimmed mean against poisoned updates); 0: the plain mean")
      ->capture_default_str()
      ->check(CLI::Range(0.0f, 0.45f));
  app.add_option("--run.check-owners", o.check_owners,
                 "The direct exchange's segments are reduced twice (owner and checker) and both "
                 "sign the result, so an owner cannot return a wrong mean unnoticed (about twice "
                 "the reduce-scatter's upload); false: owners are trusted")
      ->capture_default_str();
  app.add_option("--run.donors", o.donors, "Peers named to a newcomer to fetch the state from")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app.add_option("--admission.policy", o.admission, "Who may join: token, allowlist or open")
      ->capture_default_str();
  app.add_option("--admission.join-token", o.join_token,
                 "The shared join token (policy token); give it to the run's volunteers");
  app.add_option("--admission.allowed-keys", o.allowed_keys,
                 "Public keys admitted (policy allowlist), as printed by loco-peer keygen");
}

proto::TrackerCoreConfig to_core_config(const TrackerOptions& o) {
  if (o.run_id.empty())
    throw Error(ErrorCategory::config, "--run.id: no run id; every peer of the run uses the same");
  if (o.run_id.size() > proto::kMaxTextBytes)
    throw Error(ErrorCategory::config, fmt::format("--run.id: {} bytes, at most {}",
                                                   o.run_id.size(), proto::kMaxTextBytes));
  if (o.run_config.empty())
    throw Error(ErrorCategory::config,
                "--run.config: name the loco-train config of the run (model, data, seed), e.g. "
                "configs/tiny.toml; the peers must train with the same settings");
  proto::TrackerCoreConfig c;
  c.run_id = o.run_id;
  c.admission = admission(o);
  train::TrainConfig run = cli::load_train_config(o.run_config);
  train::apply_swarm_defaults(run);  // as loco-peer does: the settings must be the peers'
  c.settings = train::run_settings(run);
  c.genesis = train::genesis_state(run).hash();
  c.gossip = run.strategy.gossip_group != 0;  // no rounds: groups average among themselves
  c.final_round = train::final_round(run);    // train.steps: where the run ends
  train::apply_timed_rounds(run, c);          // strategy.round-seconds: weighted rounds
  c.shard_count = o.shard_count;
  c.heartbeat_interval = duration(o.heartbeat_interval, "--run.heartbeat-interval");
  c.eviction_timeout = duration(o.eviction_timeout, "--run.eviction-timeout");
  c.join_timeout = duration(o.join_timeout, "--run.join-timeout");
  c.restart_grace = net::parse_duration(o.restart_grace, "--run.restart-grace", kMaxTimeout);
  c.round_timeout = duration(o.round_timeout, "--run.round-timeout");
  c.report_grace = duration(o.report_grace, "--run.report-grace");
  c.accusation_grace = duration(o.accusation_grace, "--run.accusation-grace");
  c.judge_grace = duration(o.judge_grace, "--run.judge-grace");
  c.accusation_bench_rounds = o.accusation_bench;
  c.wait_rounds = o.wait_rounds;
  c.max_relayed_links = o.max_relayed_links;
  c.max_members_per_network = o.max_members_per_address;
  c.bar_time = duration(o.bar_time, "--tracker.bar-time");
  c.message_rate = o.message_rate;
  c.message_burst = o.message_burst;
  if (c.eviction_timeout <= 2 * c.heartbeat_interval)
    throw Error(ErrorCategory::config,
                "--run.eviction-timeout must be more than twice --run.heartbeat-interval, or one "
                "late heartbeat evicts a peer");
  c.min_peers = o.min_peers;
  c.max_attempts = o.max_attempts;
  c.update_norm_limit = o.update_norm_limit;
  c.trim = o.trim;
  c.check_owners = o.check_owners;
  c.donors_per_resync = o.donors;
  const CustodyLimits custody = to_custody_limits(o);
  c.custody.every = o.custody_every;
  c.custody.max_state_bytes = custody.max_state_bytes;
  c.custody.pull_bytes_per_s =
      net::parse_bandwidth(o.custody_bandwidth, "--tracker.custody-bandwidth") / 8;
  return c;
}

CustodyLimits to_custody_limits(const TrackerOptions& o) {
  const CustodyLimits limits{
      .keep = o.custody_keep,
      .max_disk_bytes = net::parse_byte_count(o.custody_max_bytes, "--tracker.custody-max-bytes"),
      .max_state_bytes = net::parse_byte_count(o.custody_max_state, "--tracker.custody-max-state")};
  if (limits.max_state_bytes > limits.max_disk_bytes)
    throw Error(ErrorCategory::config,
                fmt::format("--tracker.custody-max-state ({}) is above --tracker.custody-max-bytes "
                            "({}): one copy must fit the disk budget",
                            o.custody_max_state, o.custody_max_bytes));
  return limits;
}

BufferCaps to_buffer_caps(const TrackerOptions& o) {
  return BufferCaps{.joining = o.max_buffer_joining,
                    .member = o.max_buffer_member,
                    .join_deadline = duration(o.join_deadline, "--tracker.join-deadline")};
}

DownloadLimits to_download_limits(const TrackerOptions& o) {
  const auto floor = net::parse_bandwidth(o.model_download_floor, "--tracker.model-download-floor");
  if (floor == 0)
    throw Error(ErrorCategory::config,
                fmt::format("--tracker.model-download-floor = \"{}\": must be a rate (e.g. "
                            "256kbit): without a floor one slow reader holds a place for good",
                            o.model_download_floor));
  DownloadLimits limits;
  limits.max_downloads = o.model_downloads;
  limits.floor_bytes_per_second = std::max<std::uint64_t>(floor / 8, 1);
  validate(limits);
  return limits;
}

net::ListenerLimits to_listener_limits(const TrackerOptions& o) {
  const net::ListenerLimits limits{
      .max_handshakes = o.max_handshakes,
      .max_waiting = o.max_waiting,
      .max_admitted = o.max_connections,
      .max_pending_per_source = o.max_per_address,
      .max_admitted_per_source = o.max_connections_per_address,
      .handshake_timeout = duration(o.handshake_timeout, "--tracker.handshake-timeout"),
      .bundle_timeout = duration(o.bundle_timeout, "--tracker.bundle-timeout"),
      .max_buffered_bytes = o.max_buffer_joining};
  if (limits.handshake_timeout > limits.bundle_timeout)
    throw Error(ErrorCategory::config,
                "--tracker.handshake-timeout must not be longer than --tracker.bundle-timeout, "
                "which counts from the same moment (accept)");
  net::validate(limits);
  return limits;
}

}  // namespace loco::tracker
