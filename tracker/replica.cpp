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
      election_(
          std::make_unique<etcd::Election>(client_, config_.prefix + "leader/", config_.name)) {}

Replica::~Replica() = default;

void Replica::campaign() {
  if (lease_ != 0) {
    try {
      client_.lease_revoke(lease_);  // our old key goes with it
    } catch (const Error&) {
      // Unreachable: the old lease expires on its own, at most a lease from now.
    }
    lease_ = 0;
  }
  const etcd::Lease lease = client_.lease_grant(config_.lease.count());
  lease_ = lease.id;
  lease_refreshed_ = steady_now();
  election_->campaign(lease_);
}

bool Replica::keep_lease(TimePoint now) {
  if (now - lease_refreshed_ < config_.lease / 3) return true;
  if (client_.lease_keepalive(lease_) <= 0) return false;
  lease_refreshed_ = now;
  return true;
}

std::optional<std::int64_t> Replica::wait_until_leading(const volatile std::sig_atomic_t& stop) {
  std::string followed;
  while (stop == 0) {
    try {
      if (lease_ == 0) campaign();
      const etcd::Election::Standing standing =
          keep_lease(steady_now()) ? election_->poll() : etcd::Election::Standing::lost;
      if (standing == etcd::Election::Standing::leading) {
        spdlog::info("replica {}: leading run {} (term {})", config_.name, config_.prefix,
                     election_->term());
        return election_->term();
      }
      if (standing == etcd::Election::Standing::lost) {
        campaign();  // looked at again after the pause
      } else if (const auto& leader = election_->leader(); leader && leader->value != followed) {
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
  try {
    if (!keep_lease(now)) {
      spdlog::error("replica {}: deposed: etcd says its lease expired", config_.name);
      return false;
    }
    if (election_->poll() != etcd::Election::Standing::leading) {
      spdlog::error("replica {}: deposed: its election key is gone", config_.name);
      return false;
    }
    return true;
  } catch (const Error& e) {
    // Unanswered for a whole lease: etcd may have let it expire and another replica lead.
    if (now - lease_refreshed_ >= config_.lease) {
      spdlog::error("replica {}: deposed: etcd unreachable for a whole lease: {}", config_.name,
                    e.what());
      return false;
    }
    spdlog::warn("replica {}: etcd: {}", config_.name, e.what());
    return true;
  }
}

void Replica::resign() {
  if (lease_ == 0) return;
  try {
    election_->resign();
    client_.lease_revoke(lease_);
    lease_ = 0;
  } catch (const Error& e) {
    spdlog::warn("replica {}: could not resign ({}): the lease expires on its own", config_.name,
                 e.what());
  }
}

}  // namespace loco::tracker
