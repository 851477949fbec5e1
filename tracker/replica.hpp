#pragma once
// One loco-tracker among several replicas of a run (docs/TRACKER.md, "Running replicas"): the
// driver, over a real etcd and in real time, of replica::Candidate (loco/replica/candidate.hpp:
// the campaign, the lease kept alive, the looks at the election and when a leader is deposed),
// which the simulator's replicas drive too.
//
// A follower blocks in wait_until_leading(): it looks every kPollPeriod until its key is the
// oldest. The leader then runs the TrackerCore (serve.cpp) and calls still_leading() from a
// timer; false means it must stop forming rounds at once (its key is gone, or etcd could not be
// reached for a whole lease, after which another replica may lead). Its durable changes are
// fenced writes (etcd_state.hpp), so even before a tick notices, a deposed leader's save is
// refused and it announces nothing.
//
// Keys, under /loco/<run id>/: leader/<lease in hex> (the election), state (the snapshot) and
// rounds/<round> (the commit log, loco/replica/commit_log.hpp).
// Calls block on etcd (a loopback or LAN round trip each), on the caller's thread: a follower's
// on the main thread, a leader's still_leading() on the term's StoreThread (store_thread.hpp),
// with its saves, so that neither stalls the event loop; never two at once.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "loco/core/time.hpp"
#include "loco/etcd/etcd_client.hpp"
#include "loco/replica/candidate.hpp"
#include "tracker/failover_record.hpp"

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
  static constexpr Duration kPollPeriod = replica::Candidate::kPollPeriod;

  explicit Replica(ReplicaConfig config);

  // Blocks until this replica leads and returns its term, or until `stop` is set (a signal) and
  // returns nothing (having resigned). Errors of etcd are logged and retried.
  std::optional<std::int64_t> wait_until_leading(const std::atomic<bool>& stop);
  // For the leader, every kPollPeriod or so. False: deposed, stop at once (and wait again).
  bool still_leading(TimePoint now);
  // Gives the lead up at once (a clean stop): the next replica need not wait for the lease.
  void resign();

  replica::KvStore& store() { return client_; }
  replica::Election& election() { return candidate_.election(); }
  const std::string& prefix() const { return config_.prefix; }  // the run's keys' (etcd_state.hpp)
  const std::string& name() const { return config_.name; }
  // How this replica came to lead, from its own looks (for the status page).
  const FailoverRecord& failovers() const { return failovers_; }

 private:
  // Notes in failovers_ what the last look found, at the wall clock's time: the leader, or that
  // this replica took the lead.
  void record_look(bool took_lead);

  ReplicaConfig config_;
  etcd::EtcdClient client_;
  replica::Candidate candidate_;
  FailoverRecord failovers_;
};

}  // namespace loco::tracker
