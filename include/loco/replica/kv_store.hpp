#pragma once
// What tracker replicas need of a linearizable key-value store with leases: etcd v3's range,
// transaction and lease calls, as plain values. `etcd::EtcdClient` (etcd/etcd_client.hpp) serves
// them from a real etcd over its JSON gateway, and the simulator's model of the store
// (sim/store_model.hpp) in virtual time, which is why `Election` (election.hpp) and `Candidate`
// (candidate.hpp) take this interface and not the client.
//
// Revisions are etcd's: one counter for the whole store, raised by every write, so a key's
// create_revision orders it against every other key ever written. Keys and values are bytes.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace loco::replica {

using LeaseId = std::int64_t;  // 0: no lease

struct KeyValue {
  std::string key;
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;  // writes since the key was created
  LeaseId lease = 0;
};

// The keys in [key, range_end), or only `key` when range_end is empty.
struct Range {
  std::string key;
  std::string range_end;
  std::int64_t limit = 0;     // 0: no limit
  bool oldest_first = false;  // sorted by create_revision, ascending (else by key)
  // How large the answer may be (a whole state: megabytes): a client over a network waits for it
  // accordingly. 0: small.
  std::size_t answer_bytes = 0;
};

struct Put {
  std::string key;
  std::string value;
  LeaseId lease = 0;  // the key is deleted when this lease expires or is revoked
};

struct DeleteRange {
  std::string key;
  std::string range_end;  // empty: only `key`
};

using Op = std::variant<Range, Put, DeleteRange>;

// `key`'s field equals `value` (0 for a key that does not exist). Equality is all fencing needs.
struct Compare {
  enum class Target { create_revision, mod_revision, version };
  std::string key;
  Target target = Target::create_revision;
  std::int64_t value = 0;
};

// If every compare holds, the success ops run, else the failure ops: atomically.
struct Txn {
  std::vector<Compare> compare;
  std::vector<Op> success;
  std::vector<Op> failure;
};

struct RangeResult {
  std::int64_t revision = 0;  // the store's revision when it was read
  std::vector<KeyValue> kvs;  // at most the limit asked for
  std::int64_t count = 0;     // keys in the range, past the limit too
};

struct TxnResult {
  bool succeeded = false;
  std::int64_t revision = 0;
  // The keys each Range op of the branch taken found, in the order of those ops.
  std::vector<std::vector<KeyValue>> ranges;
};

struct Lease {
  LeaseId id = 0;
  std::int64_t ttl_s = 0;  // as granted: the store may raise a TTL below its minimum
};

// A Range or DeleteRange of the one key `key`.
inline Range one_key(std::string key) {
  return Range{std::move(key), {}, 0, false};
}
inline DeleteRange delete_key(std::string key) {
  return DeleteRange{std::move(key), {}};
}

// The range_end that makes a Range or DeleteRange cover every key starting with `prefix`.
std::string prefix_end(std::string_view prefix);

// Calls block. An unreachable store is Error(network); an answer that is not well-formed is
// Error(format); a request the store refuses (a lease it does not know, ...) is Error(protocol).
class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual RangeResult range(const Range& range) = 0;
  virtual TxnResult txn(const Txn& txn) = 0;
  virtual Lease lease_grant(std::int64_t ttl_s) = 0;
  // The lease's remaining TTL after the refresh; 0 when it has expired or was revoked.
  virtual std::int64_t lease_keepalive(LeaseId lease) = 0;
  virtual void lease_revoke(LeaseId lease) = 0;  // its keys are deleted with it
};

}  // namespace loco::replica
