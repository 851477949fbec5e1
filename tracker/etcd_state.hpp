#pragma once
// A tracker replica's durable state in etcd, under the run's prefix "/loco/<run id>/"
// (docs/FORMATS.md, "A replica's keys in etcd"): the snapshot in one key, <prefix>state, and the
// commit log, one key per committed round (commit_log.hpp). Only the leader writes, each save in
// one transaction fenced on its election (etcd/election.hpp) that holds the state and the log
// entries of the rounds it commits: a deposed replica (paused past its lease, cut off) writes
// neither, its save() returns false and it must announce nothing. A save etcd did not answer
// returns false too (the write may or may not have landed; either way the replica cannot show it
// still leads): loco-tracker stops leading and campaigns again (replica.hpp). Any replica loads
// the state when it becomes leader; the log is only written (it is for operators and tests).

#include <cstdint>
#include <string>

#include "loco/etcd/election.hpp"
#include "loco/etcd/kv_store.hpp"
#include "state_store.hpp"

namespace loco::tracker {

class EtcdState final : public StateStore {
 public:
  // `election` must be leading when save() is called, and outlive this store (as `store` must).
  // `prefix` is the run's, "/loco/<run id>/".
  EtcdState(etcd::KvStore& store, etcd::Election& election, std::string prefix)
      : store_(store), election_(election), prefix_(std::move(prefix)) {}

  // Also notes the round the log is written up to: the loaded state's (the log is written with
  // the state, so it holds every round up to it and none past it).
  std::optional<proto::TrackerSnapshot> load() override;
  bool save(const proto::TrackerSnapshot& state) override;
  std::string where() const override { return "etcd key " + state_key(); }

 private:
  std::string state_key() const { return prefix_ + "state"; }

  etcd::KvStore& store_;
  etcd::Election& election_;
  std::string prefix_;
  // The newest round the log holds as this replica knows it: from load(), then from each save.
  std::uint64_t logged_through_ = 0;
};

}  // namespace loco::tracker
