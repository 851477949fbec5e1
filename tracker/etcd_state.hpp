#pragma once
// A tracker replica's durable state in etcd: one key, <prefix>state, written only by the leader
// in a transaction fenced on its election (etcd/election.hpp), so a deposed replica (paused past
// its lease, cut off) cannot overwrite what the new leader saved: its save() returns false and it
// must announce nothing. A save etcd did not answer returns false too (the write may or may not
// have landed; either way the replica cannot show it still leads): loco-tracker stops leading
// and campaigns again (replica.hpp). Any replica loads the key when it becomes leader.

#include <string>

#include "loco/etcd/election.hpp"
#include "loco/etcd/kv_store.hpp"
#include "state_store.hpp"

namespace loco::tracker {

class EtcdState final : public StateStore {
 public:
  // `election` must be leading when save() is called, and outlive this store (as `store` must).
  EtcdState(etcd::KvStore& store, etcd::Election& election, std::string key)
      : store_(store), election_(election), key_(std::move(key)) {}

  std::optional<std::vector<std::byte>> load() override;
  bool save(std::span<const std::byte> state) override;
  std::string where() const override { return "etcd key " + key_; }

 private:
  etcd::KvStore& store_;
  etcd::Election& election_;
  std::string key_;
};

}  // namespace loco::tracker
