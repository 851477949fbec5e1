#pragma once
// A tracker replica's durable state in etcd: the StateStore loco-tracker saves through when it
// runs as a replica, over replica::FencedState (loco/replica/fenced_state.hpp: the state key and
// the commit log, written in one transaction fenced on the replica's election). A deposed
// replica's save() returns false and it must announce nothing; so does a save etcd did not
// answer, logged here: loco-tracker stops leading and campaigns again (replica.hpp).

#include <string>

#include "loco/replica/fenced_state.hpp"
#include "state_store.hpp"

namespace loco::tracker {

class EtcdState final : public StateStore {
 public:
  // `election` must be leading when save() is called, and outlive this store (as `store` must).
  // `prefix` is the run's, "/loco/<run id>/".
  EtcdState(replica::KvStore& store, replica::Election& election, std::string prefix)
      : fenced_(store, election, std::move(prefix)) {}

  std::optional<proto::TrackerSnapshot> load() override { return fenced_.load(); }
  bool save(const proto::TrackerSnapshot& state) override;
  std::string where() const override { return "etcd key " + fenced_.state_key(); }

 private:
  replica::FencedState fenced_;
};

}  // namespace loco::tracker
