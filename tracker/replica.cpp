#include "replica.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <thread>

#include "loco/core/error.hpp"
#include "loco/net/units.hpp"
#include "tracker_options.hpp"

namespace loco::tracker {

ReplicaConfig replica_config(const TrackerOptions& options) {
  ReplicaConfig config;
  std::string_view rest = options.etcd;
  std::size_t comma = 0;
  do {  // every piece between commas is a member: an empty one is refused
    comma = rest.find(',');
    try {
      config.client.endpoints.push_back(etcd::parse_etcd_endpoint(rest.substr(0, comma)));
    } catch (const Error& e) {
      throw Error(ErrorCategory::config, "--tracker.etcd: " + e.message());
    }
    if (comma != std::string_view::npos) rest.remove_prefix(comma + 1);
  } while (comma != std::string_view::npos);
  const Duration lease =
      net::parse_duration(options.etcd_lease, "--tracker.etcd-lease", std::chrono::minutes(10));
  config.lease = std::chrono::duration_cast<std::chrono::seconds>(lease);
  if (config.lease < std::chrono::seconds(1) || config.lease != lease)
    throw Error(ErrorCategory::config,
                fmt::format("--tracker.etcd-lease = \"{}\": etcd's leases are whole seconds, at "
                            "least 1",
                            options.etcd_lease));
  // A call to a frozen member gives up in time for the next member to refresh the lease.
  config.client.io_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(lease / 3);
  if (options.run_id.empty()) throw Error(ErrorCategory::config, "--run.id: replicas need one");
  config.prefix = "/loco/" + options.run_id + "/";
  config.name = options.replica.empty() ? options.listen : options.replica;
  return config;
}

Replica::Replica(ReplicaConfig config)
    : config_(std::move(config)),
      client_(config_.client),
      candidate_(client_,
                 {.prefix = config_.prefix, .name = config_.name, .lease = config_.lease}) {}

std::optional<std::int64_t> Replica::wait_until_leading(const std::atomic<bool>& stop) {
  std::string followed;
  while (!stop) {
    try {
      const replica::Election::Standing standing = candidate_.follow(steady_now());
      record_look(standing == replica::Election::Standing::leading);
      if (standing == replica::Election::Standing::leading) {
        spdlog::info("replica {}: leading run {} (term {})", config_.name, config_.prefix,
                     candidate_.term());
        return candidate_.term();
      }
      const auto& leader = candidate_.election().leader();
      if (standing == replica::Election::Standing::waiting && leader && leader->value != followed) {
        followed = leader->value;
        spdlog::info("replica {}: following {} (term {})", config_.name, followed, leader->term);
      }
    } catch (const Error& e) {
      spdlog::warn("replica {}: etcd: {}; trying again", config_.name, e.what());
    }
    std::this_thread::sleep_for(kPollPeriod);
  }
  resign();
  return std::nullopt;
}

bool Replica::still_leading(TimePoint now) {
  using Look = replica::Candidate::Look;
  switch (candidate_.lead(now)) {
    case Look::leading: record_look(false); return true;
    case Look::unanswered:
      spdlog::warn("replica {}: etcd: {}", config_.name, candidate_.error());
      return true;
    case Look::lease_expired:
      spdlog::error("replica {}: deposed: etcd says its lease expired", config_.name);
      return false;
    case Look::key_gone:
      spdlog::error("replica {}: deposed: its election key is gone", config_.name);
      return false;
    case Look::unreachable:
      spdlog::error("replica {}: deposed: etcd unreachable for a whole lease: {}", config_.name,
                    candidate_.error());
      return false;
  }
  return false;
}

void Replica::record_look(bool took_lead) {
  const auto& leader = candidate_.election().leader();
  if (!leader) return;
  const auto unix_ms =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  if (took_lead)
    failovers_.took_lead(*leader, unix_ms);
  else
    failovers_.saw(*leader, unix_ms);
}

void Replica::resign() {
  if (!candidate_.resign())
    spdlog::warn("replica {}: could not resign ({}): the lease expires on its own", config_.name,
                 candidate_.error());
}

}  // namespace loco::tracker
