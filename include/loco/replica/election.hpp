#pragma once
// One leader among tracker replicas, elected through a KvStore (etcd's own recipe, as its
// `concurrency.Election` does it): each candidate creates the key <prefix><its lease in hex>
// under its lease; the oldest key (lowest create_revision) leads. A key only disappears (its
// lease expired or was revoked, or it was resigned) and a new key is always younger than every
// key there, so a candidate whose key is the oldest stays the leader for as long as its key
// exists: a transaction that also checks "my key still has create_revision == term" is a write
// that only the current leader can make (`fenced`). A leader paused past its lease, or cut off,
// finds its fenced writes refused: it learns it was deposed from the store, never by guessing.
//
// The term is the leader's key's create_revision: unique, and higher for every later leader, so
// peers can refuse a message stamped with an older term than one they have seen.
//
// The caller owns the lease (grants it, keeps it alive at a third of its TTL, revokes it): the
// election only reads and writes keys. No watch: a follower polls, at a period of its choosing.
//
// Call order: campaign(lease), then poll() as often as wanted; fenced() only after a poll() that
// returned `leading`; resign() at any time after campaign(). After `lost`, campaign again with a
// fresh lease. Calls block on the store and pass its Error on (network: try again later).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "loco/replica/kv_store.hpp"

namespace loco::replica {

struct Leader {
  std::string value;  // what the leader campaigned with (its address and public key)
  std::int64_t term = 0;
  bool operator==(const Leader&) const = default;
};

class Election {
 public:
  // `prefix` names the election ("/loco/<run>/leader/"); `value` is what followers see of us.
  Election(KvStore& store, std::string prefix, std::string value);

  // Enters the race under `lease`: creates our key unless a previous campaign with this lease
  // made it. Returns our term (the key's create_revision).
  std::int64_t campaign(LeaseId lease);

  enum class Standing {
    leading,  // our key is the oldest: we lead until it disappears
    waiting,  // an older key leads (leader() says whose)
    lost,     // our key is gone (lease expired, revoked or resigned): campaign again
  };
  // One look at the store, atomic: our key still there, and the oldest key.
  Standing poll();

  std::int64_t term() const { return term_; }
  Standing standing() const { return standing_; }  // as of the last call
  // The leader as of the last poll (ourselves when leading); empty when lost or none.
  const std::optional<Leader>& leader() const { return leader_; }
  // The candidates as of the last poll, oldest (the leader) first, at most kMaxCandidates: for
  // the status page. Empty when that poll found our key gone.
  static constexpr std::int64_t kMaxCandidates = 16;
  const std::vector<Leader>& candidates() const { return candidates_; }

  struct Fenced {
    bool deposed = false;  // our key is gone: nothing was written, we no longer lead
    TxnResult result;      // else: the caller's transaction (its own compares, its branch)
  };
  // Runs `txn` only while we still lead: our key's create_revision == term is added to its
  // compares. When deposed, standing becomes lost.
  Fenced fenced(Txn txn);

  // Deletes our key if it is still ours (the next candidate leads at its next poll).
  void resign();

  // Who leads `prefix` now, for an observer that is not a candidate.
  static std::optional<Leader> observe(KvStore& store, const std::string& prefix);

 private:
  std::string my_key() const;
  Compare still_mine() const;

  KvStore& store_;
  std::string prefix_;
  std::string value_;
  LeaseId lease_ = 0;
  std::int64_t term_ = 0;
  Standing standing_ = Standing::lost;
  std::optional<Leader> leader_;
  std::vector<Leader> candidates_;
};

}  // namespace loco::replica
