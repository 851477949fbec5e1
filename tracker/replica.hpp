#pragma once
// One loco-tracker among several replicas of a run (docs/TRACKER.md, "Running replicas"): its
// standing in the run's election in etcd (etcd/election.hpp), kept by the process that drives it.
//
// A follower blocks in wait_until_leading(): it campaigns under a lease of its own, keeps the lease
// alive and polls the election until its key is the oldest. The leader then runs the TrackerCore
// (serve.cpp) and calls still_leading() from a timer: it refreshes the lease when a third of it has
// passed and looks at the election; false means it must stop forming rounds at once (its key is
// gone, or etcd could not be reached for a whole lease, after which another replica may lead).
// Its durable changes are fenced writes (etcd_state.hpp), so even before a tick notices, a deposed
// leader's save is refused and it announces nothing.
//
// Keys, under /loco/<run id>/: leader/<lease in hex> (the election), state (the snapshot) and
// rounds/<round> (the commit log, commit_log.hpp).
// Calls block on etcd (a loopback or LAN round trip each); they run on the caller's thread.

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "loco/core/time.hpp"
#include "loco/etcd/election.hpp"
#include "loco/etcd/etcd_client.hpp"

namespace loco::tracker {

struct TrackerOptions;

struct ReplicaConfig {
  etcd::EtcdClientOptions client;
  std::string prefix;  // "/loco/<run id>/"
  std::string name;    // what the others see of this replica (--tracker.replica)
  std::chrono::seconds lease{3};
};

// --tracker.etcd, --tracker.replica and --tracker.etcd-lease checked; Error(config) names the one.
ReplicaConfig replica_config(const TrackerOptions& options);

class Replica {
 public:
  // How often a follower looks whether it leads now, and a leader whether it still does.
  static constexpr Duration kPollPeriod = std::chrono::milliseconds(250);

  explicit Replica(ReplicaConfig config);
  ~Replica();

  // Blocks until this replica leads and returns its term, or until `stop` is set (a signal) and
  // returns nothing (having resigned). Errors of etcd are logged and retried.
  std::optional<std::int64_t> wait_until_leading(const volatile std::sig_atomic_t& stop);
  // For the leader, every kPollPeriod or so. False: deposed, stop at once (and wait again).
  bool still_leading(TimePoint now);
  // Gives the lead up at once (a clean stop): the next replica need not wait for the lease.
  void resign();

  etcd::KvStore& store() { return client_; }
  etcd::Election& election() { return *election_; }
  const std::string& prefix() const { return config_.prefix; }  // the run's keys' (etcd_state.hpp)
  const std::string& name() const { return config_.name; }

 private:
  // A fresh lease and a campaign under it; the previous lease, if any, is revoked first.
  void campaign();
  // Refreshes the lease when a third of it has passed; false when etcd says it is gone.
  bool keep_lease(TimePoint now);

  ReplicaConfig config_;
  etcd::EtcdClient client_;
  std::unique_ptr<etcd::Election> election_;
  etcd::LeaseId lease_ = 0;
  TimePoint lease_refreshed_{};  // the last keepalive etcd answered (or the grant)
};

}  // namespace loco::tracker
