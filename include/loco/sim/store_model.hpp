#pragma once
// The simulator's consensus store: an in-memory model of what tracker replicas need of etcd
// (replica/kv_store.hpp), linearizable because it is one object on the event loop, with leases
// that expire on the virtual clock, so that the simulator's replicas (replica_node.hpp) elect,
// fence and fail over exactly as loco-tracker's do over a real etcd, replayed from a seed.
//
// What it keeps of etcd v3 (and what tests/sim/store_model_test.cpp holds it to, as
// tests/etcd holds the real client):
//   - one revision for the whole store, 1 when empty, raised by one by every transaction that
//     changes something (all of its puts share it), by a lease revoked or expired that takes
//     keys with it, never by a read or a write that changes nothing; a key's create_revision,
//     mod_revision and version as etcd keeps them; a compare on a missing key sees 0;
//   - ranges sorted by key (bytes, unsigned), or oldest first by create_revision, a limit that
//     cuts kvs but not count;
//   - a lease expires ttl seconds after its grant or last keepalive and takes its keys with it; a
//     put under a lease the store does not know is refused whole (Error(protocol)); a revoke of a
//     lease already gone is not an error (as EtcdClient makes it); a keepalive of one is 0.
// The faults a schedule gives it (each call takes no virtual time; the failover's times are the
// lease and the replicas' looks):
//   - down (set_down): every call fails with Error(network), as when etcd lost its majority.
//     While down no lease expires, and when it is back every lease has its full TTL again, as
//     etcd's new raft leader extends them (lessor Promote): a leader is not deposed by the store's
//     outage, only by its own rule (a whole lease unanswered, replica/candidate.hpp);
//   - cut (set_cut): one client's calls fail with Error(network) and change nothing (a partition
//     between that replica and every member);
//   - a lost answer (lose_next_answer): the next transaction of one client that changes the store
//     lands, and the client gets Error(network), as when etcd applied a write and its answer was
//     lost on the way. A leader's save is then written and never announced: the window between
//     etcd's write and the commit on the wire in which a SIGKILL leaves the same state.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loco/replica/kv_store.hpp"
#include "loco/sim/event_loop.hpp"

namespace loco::sim {

class StoreModel {
 public:
  explicit StoreModel(EventLoop& loop) : loop_(loop) {}

  // A client of the store (a replica's connection to it), numbered for set_cut(); the store
  // outlives it.
  std::unique_ptr<replica::KvStore> client(std::size_t id);

  void set_down(bool down);
  bool down() const { return down_; }
  void set_cut(std::size_t client, bool cut);
  // Armed (or disarmed) for client `client`'s next transaction that changes the store.
  void lose_next_answer(std::size_t client, bool lose = true);
  std::uint64_t answers_lost() const { return answers_lost_; }

  std::int64_t revision() const { return revision_; }
  // What every read sees now (leases expired first): for checks, never refused.
  replica::RangeResult peek(const replica::Range& range);

  // The calls, for a client that was let through.
  replica::RangeResult range(const replica::Range& range);
  replica::TxnResult txn(const replica::Txn& txn);
  replica::Lease lease_grant(std::int64_t ttl_s);
  std::int64_t lease_keepalive(replica::LeaseId lease);
  void lease_revoke(replica::LeaseId lease);
  // Error(network) when client `id` cannot reach the store now.
  void check_reachable(std::size_t id) const;
  // After a transaction of client `id` that changed the store: Error(network) when its answer is
  // to be lost (lose_next_answer).
  void answer(std::size_t id);

 private:
  struct LeaseState {
    std::int64_t ttl_s = 0;
    TimePoint deadline{};
  };
  // Leases past their deadline revoked, in deadline order (none while down).
  void expire();
  bool holds(const replica::Compare& compare) const;
  std::vector<replica::KeyValue> read(const replica::Range& range) const;
  // The ops of a branch, at `revision`; whether any changed the store.
  bool apply(const std::vector<replica::Op>& ops, std::int64_t revision,
             std::vector<std::vector<replica::KeyValue>>& ranges);
  bool remove_keys_of(replica::LeaseId lease);  // whether it had any

  EventLoop& loop_;
  std::map<std::string, replica::KeyValue> keys_;
  std::map<replica::LeaseId, LeaseState> leases_;
  std::int64_t revision_ = 1;
  replica::LeaseId next_lease_ = 0x10000;
  bool down_ = false;
  std::vector<bool> cut_;          // by client id
  std::vector<bool> lose_answer_;  // by client id
  std::uint64_t answers_lost_ = 0;
};

}  // namespace loco::sim
