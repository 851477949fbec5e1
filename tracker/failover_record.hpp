#pragma once
// How a tracker replica came to lead, for its status page and /metrics (docs/TRACKER.md, "Running
// replicas"): the last leader its own looks at the election saw, and when, until it leads itself;
// then the failover from that leader to it. Only what this replica saw: a leader it never looked
// at while it led (it was down then) is not known, and the time a dead leader's key lingered
// before it expired is not seen (the key was there: it looked like a leader).
//
// Call order: saw() after every look that found a leader (another replica while following, this
// one while leading), took_lead() after the look that found this replica leading.

#include <cstdint>

#include "loco/proto/tracker_status.hpp"
#include "loco/replica/election.hpp"

namespace loco::tracker {

class FailoverRecord {
 public:
  // A look at `unix_ms` found `leader` leading.
  void saw(const replica::Leader& leader, std::uint64_t unix_ms);
  // The look at `unix_ms` found this replica leading (`self`: its name and term): the failover
  // from the leader seen last before (none, for the first leader this replica saw; itself, for a
  // replica deposed and leading again).
  void took_lead(const replica::Leader& self, std::uint64_t unix_ms);

  // The last failover to this replica (unix_ms 0: it has not led yet).
  const proto::Failover& last() const { return last_; }

 private:
  replica::Leader seen_;  // term 0: none seen yet
  std::uint64_t seen_ms_ = 0;
  proto::Failover last_;
};

}  // namespace loco::tracker
