#pragma once
// One tracker replica's part in the run's election, the decisions only (docs/TRACKER.md, "Running
// replicas"): it campaigns under a lease of its own, keeps the lease alive at a third of its TTL
// and looks at the election, as a follower until it leads, then as the leader until it is
// deposed. No clock, no thread, no sleep: the driver calls follow() or lead() every kPollPeriod
// with its time, and the store's calls are the only I/O. loco-tracker's Replica
// (tracker/replica.hpp) drives it over etcd in real time, the simulator's replicas
// (sim/replica_node.hpp) over the store model in virtual time, so a failover the simulator
// replays is loco-tracker's.
//
// A leader that hears nothing from the store keeps leading for a lease at most: past a whole
// lease without an answer, the store may have let its lease expire and another replica lead.
// Its durable changes are fenced writes (fenced_state.hpp), so even before a look notices, a
// deposed leader's save is refused and it announces nothing.

#include <chrono>
#include <cstdint>
#include <string>

#include "loco/core/time.hpp"
#include "loco/replica/election.hpp"
#include "loco/replica/kv_store.hpp"

namespace loco::replica {

struct CandidateConfig {
  std::string prefix;  // the run's, "/loco/<run id>/": the election is <prefix>leader/
  std::string name;    // what the others see of this replica (its address)
  std::chrono::seconds lease{3};
};

class Candidate {
 public:
  // How often a follower looks whether it leads now, and a leader whether it still does.
  static constexpr Duration kPollPeriod = std::chrono::milliseconds(250);

  // `store` outlives the candidate.
  Candidate(KvStore& store, CandidateConfig config);

  // A follower's look: campaigns under a fresh lease if it has none or lost its key, refreshes
  // the lease when a third of it has passed, and polls. `leading`: this replica now leads
  // (term()); `waiting`: election().leader() says who does. The store's Error passes on (look
  // again at the next period).
  Election::Standing follow(TimePoint now);

  // What the leader's look found. Anything but leading and unanswered: stop forming rounds at
  // once (and follow again).
  enum class Look {
    leading,
    unanswered,     // the store did not answer (error()), for less than a lease: still leads
    lease_expired,  // the store says our lease is gone
    key_gone,       // our election key is gone (revoked, resigned behind our back)
    unreachable,    // no answer for a whole lease (error()): another replica may lead
  };
  Look lead(TimePoint now);

  // Gives the lead up at once (a clean stop): the next replica need not wait for the lease.
  // False: the store could not be reached (error()); the lease then expires on its own.
  bool resign();

  Election& election() { return election_; }
  const Election& election() const { return election_; }
  std::int64_t term() const { return election_.term(); }
  const CandidateConfig& config() const { return config_; }
  const std::string& error() const { return error_; }

 private:
  // A fresh lease and a campaign under it; the previous lease, if any, is revoked first.
  void campaign(TimePoint now);
  // Refreshes the lease when a third of it has passed; false when the store says it is gone.
  bool keep_lease(TimePoint now);

  KvStore& store_;
  CandidateConfig config_;
  Election election_;
  LeaseId lease_ = 0;
  TimePoint lease_refreshed_{};  // the last keepalive the store answered (or the grant)
  std::string error_;
};

}  // namespace loco::replica
