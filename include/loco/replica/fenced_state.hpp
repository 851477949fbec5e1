#pragma once
// A tracker replica's durable state in the store, under the run's prefix "/loco/<run id>/"
// (docs/FORMATS.md, "A replica's keys in etcd"): the snapshot in one key, <prefix>state, and the
// commit log, one key per committed round (commit_log.hpp). Only the leader writes, each save in
// one transaction fenced on its election (election.hpp) that holds the state and the log entries
// of the rounds it commits: a deposed replica (paused past its lease, cut off) writes neither,
// and must announce nothing. A save the store did not answer is not a save either (the write may
// or may not have landed; either way the replica cannot show it still leads). Any replica loads
// the state when it becomes leader; the log is only written (it is for operators and tests).
//
// loco-tracker's EtcdState (tracker/etcd_state.hpp) and the simulator's replicas
// (sim/replica_node.hpp) both save through this, so the simulator replays the same writes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "loco/proto/tracker_snapshot.hpp"
#include "loco/replica/election.hpp"
#include "loco/replica/kv_store.hpp"

namespace loco::replica {

// The request size every etcd member must take (`--max-request-bytes`, 1.5 MiB by default;
// docs/TRACKER.md, "Running replicas"): a save is one request, and the largest state with a
// save's log entries must fit, or a run whose state grew (thousands of keys held against) could
// be saved by no replica until etcd is set up so. 10 MiB, etcd's largest recommended. etcd's
// refusal of a larger request names the flag (etcd/etcd_client.hpp).
inline constexpr std::size_t kStoreRequestBytes = std::size_t{10} << 20;
static_assert(proto::kMaxSnapshotBytes + (std::size_t{64} << 10) <= kStoreRequestBytes);

class FencedState {
 public:
  // `election` must be leading when save() is called, and outlive this (as `store` must).
  // `prefix` is the run's, "/loco/<run id>/".
  FencedState(KvStore& store, Election& election, std::string prefix)
      : store_(store), election_(election), prefix_(std::move(prefix)) {}

  // The saved state, none for a new run; Error(format) for a damaged one (or one over
  // proto::kMaxSnapshotBytes),
  // the store's Error when it cannot be reached. Also notes the round the log is written up to:
  // the loaded state's (the log is written with the state, so it holds every round up to it).
  std::optional<proto::TrackerSnapshot> load();

  enum class Saved {
    saved,
    deposed,     // refused by the fence (or the election no longer leads): nothing was written
    unanswered,  // the store's Error (error()): written or not, it cannot be announced
  };
  Saved save(const proto::TrackerSnapshot& state);
  const std::string& error() const { return error_; }  // of the last unanswered save

  std::string state_key() const { return prefix_ + "state"; }

 private:
  KvStore& store_;
  Election& election_;
  std::string prefix_;
  // The newest round the log holds as this replica knows it: from load(), then from each save.
  std::uint64_t logged_through_ = 0;
  std::string error_;
};

}  // namespace loco::replica
