#pragma once
// A read-only picture of a tracker for its operator: what /status, /metrics and the status page
// show. Plain data, filled by TrackerCore::status().

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loco/proto/tracker_snapshot.hpp"

namespace loco::proto {

struct MemberStatus {
  std::string peer_id;  // short id (12 hex digits)
  std::string public_key;
  std::string address;
  std::uint32_t shard = 0;
  double joined_s_ago = 0;
  double last_seen_s_ago = 0;
  std::uint64_t state_round = 0;
  bool in_sync = false;                                  // holds the run's current state
  bool in_round = false;                                 // a member of the running round's group
  Reachability reachability = Reachability::unmeasured;  // as the tracker's probe found
  Heartbeat last;                                        // its last heartbeat's figures
};

// A tracker replica in the run's election (docs/TRACKER.md, "Running replicas"), as the leader's
// last look found it: a replica is there while its etcd lease lives.
struct ReplicaStatus {
  std::string name;        // what it campaigned with (--tracker.replica: its name or address)
  std::uint64_t term = 0;  // its key's create_revision: its term if it leads, else its place
  bool leads = false;      // the oldest key: the leader
};

// How a replica came to lead, as its own looks at the election saw it.
struct Failover {
  std::uint64_t unix_ms = 0;    // the look that found this replica leading
  std::string from;             // the leader its looks saw before ("": none, the run's first)
  std::uint64_t from_term = 0;  // that leader's term (0: none)
  std::uint64_t to_term = 0;    // this replica's
  // From the last look that saw `from` lead to `unix_ms` (within a look, 250 ms). A leader that
  // died without resigning held its key up to a lease before that: not counted, not seen.
  std::uint64_t leaderless_ms = 0;
  bool operator==(const Failover&) const = default;
};

struct TrackerStatus {
  std::string run_id;
  std::uint64_t epoch = 0;
  std::uint64_t committed_round = 0;
  std::string committed_hash;  // hex
  std::uint64_t next_round = 0;
  std::uint64_t final_round = 0;  // the run's last round, from its config (0: none declared)
  bool run_ended = false;         // the final round is committed
  std::string phase;              // "waiting for peers", "forming round 12", "round 12 running"
  std::uint32_t attempt = 0;      // of the running round
  std::uint64_t rounds_committed = 0;  // by this process since it started
  std::uint64_t rounds_aborted = 0;
  std::uint64_t peers_joined = 0;  // admissions since start
  std::uint64_t peers_refused = 0;
  std::uint64_t peers_evicted = 0;
  std::uint64_t misbehaviours = 0;
  // Reachability: the members as last measured, the probes' outcomes since start, and the rounds
  // that left unreachable members out (more than the group's relays' budgets link).
  std::uint64_t members_reachable = 0;
  std::uint64_t members_unreachable = 0;
  std::uint64_t probes_reached = 0;
  std::uint64_t probes_unreached = 0;
  std::uint64_t members_left_out = 0;
  // Rounds paced by the tracker: the next round's inner phase as the members' step times set it
  // (round_pace.hpp); 0: the tracker sets none.
  double round_seconds = 0;
  // Relays: links between two unreachable members planned through a relay, and reports that
  // blamed a relay for a link (the relay sat out relaying for the rest of that round).
  std::uint64_t relayed_links = 0;
  std::uint64_t relays_blamed = 0;
  std::vector<MemberStatus> members;
  std::vector<RoundRecord> history;     // the committed rounds the run still has
  std::vector<LostRounds> lost_rounds;  // the newest TrackerSnapshot::kMaxLostRounds, oldest first
  // Sums over the members' last heartbeats.
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t bytes_relayed = 0;  // as the members report it: what relays forwarded
  double tokens_per_s = 0;
  // How far the members' parameters are from one another (RMS distance from their mean, per
  // value), from the sketches in their heartbeats (parameter_sketch.hpp) when two or more sent
  // one, else as the driver last learnt it (the simulator); in all-reduce mode 0. Gossip mode
  // (docs/DESIGN.md §1.6).
  double spread = 0;
  // The newest checkpoint custody copy the tracker holds (0 and 0: none), and the bytes it has
  // pulled for custody since it started.
  std::uint64_t custody_round = 0;
  std::uint64_t custody_state_bytes = 0;
  std::uint64_t custody_pulled_bytes = 0;
  // The tracker process's heap in use (tracker/heap_usage.hpp), filled in by its driver.
  std::uint64_t heap_bytes = 0;
  // A tracker replica (docs/TRACKER.md, "Running replicas"), filled in by its driver: its name
  // ("": a single tracker), its term as the leader, when it took the lead (Unix ms), the replicas
  // in the election (oldest first: the leader first) and how it came to lead.
  std::string replica;
  std::uint64_t replica_term = 0;
  std::uint64_t leading_since_ms = 0;
  std::vector<ReplicaStatus> replicas;
  Failover last_failover;
};

}  // namespace loco::proto
