#include "loco/replica/election.hpp"

#include <fmt/format.h>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::replica {
namespace {

Range oldest_of(const std::string& prefix, std::int64_t limit) {
  return {.key = prefix, .range_end = prefix_end(prefix), .limit = limit, .oldest_first = true};
}

std::optional<Leader> leader_of(const std::vector<KeyValue>& oldest) {
  if (oldest.empty()) return std::nullopt;
  return Leader{oldest.front().value, oldest.front().create_revision};
}

}  // namespace

Election::Election(KvStore& store, std::string prefix, std::string value)
    : store_(store), prefix_(std::move(prefix)), value_(std::move(value)) {
  LOCO_ASSERT(!prefix_.empty(), "an election needs a prefix");
}

std::string Election::my_key() const {
  return fmt::format("{}{:016x}", prefix_, lease_);
}

Compare Election::still_mine() const {
  return {.key = my_key(), .target = Compare::Target::create_revision, .value = term_};
}

std::int64_t Election::campaign(LeaseId lease) {
  LOCO_ASSERT(lease != 0, "a campaign needs a lease");
  lease_ = lease;
  const std::string key = my_key();
  const TxnResult result =
      store_.txn({.compare = {{.key = key, .target = Compare::Target::create_revision, .value = 0}},
                  .success = {Put{.key = key, .value = value_, .lease = lease}},
                  .failure = {one_key(key)}});
  if (result.succeeded) {
    term_ = result.revision;  // the put's revision is the key's create_revision
  } else {
    if (result.ranges.size() != 1 || result.ranges[0].size() != 1)
      throw Error(ErrorCategory::protocol,
                  fmt::format("etcd: the key {} both exists and does not", key));
    term_ = result.ranges[0][0].create_revision;
  }
  standing_ = Standing::waiting;
  leader_.reset();
  return term_;
}

Election::Standing Election::poll() {
  LOCO_ASSERT(lease_ != 0, "poll() before campaign()");
  // The oldest keys, not only the first: the others are the status page's candidates.
  const TxnResult result = store_.txn(
      {.compare = {still_mine()}, .success = {oldest_of(prefix_, kMaxCandidates)}, .failure = {}});
  candidates_.clear();
  if (!result.succeeded) {
    standing_ = Standing::lost;
    leader_.reset();
    return standing_;
  }
  LOCO_ASSERT(result.ranges.size() == 1, "decode_txn returns one range per Range op");
  for (const KeyValue& kv : result.ranges[0]) candidates_.push_back({kv.value, kv.create_revision});
  leader_ = leader_of(result.ranges[0]);
  // Our key exists, so the range cannot be empty: an empty one is a store that lies.
  if (!leader_ || leader_->term > term_)
    throw Error(ErrorCategory::protocol, "etcd: the oldest key is younger than ours, or none");
  standing_ = leader_->term == term_ ? Standing::leading : Standing::waiting;
  return standing_;
}

Election::Fenced Election::fenced(Txn txn) {
  LOCO_ASSERT(standing_ == Standing::leading, "a fenced write by a replica that does not lead");
  txn.compare.push_back(still_mine());
  txn.failure.push_back(one_key(my_key()));
  Fenced out{.result = store_.txn(txn)};
  if (out.result.succeeded) return out;
  // Our own Range went last: it says whether our key (and so our leadership) is still there.
  LOCO_ASSERT(!out.result.ranges.empty(), "decode_txn returns one range per Range op");
  const std::vector<KeyValue> mine = std::move(out.result.ranges.back());
  out.result.ranges.pop_back();
  out.deposed = mine.empty() || mine.front().create_revision != term_;
  if (out.deposed) {
    standing_ = Standing::lost;
    leader_.reset();
  }
  return out;
}

void Election::resign() {
  LOCO_ASSERT(lease_ != 0, "resign() before campaign()");
  store_.txn({.compare = {still_mine()}, .success = {delete_key(my_key())}, .failure = {}});
  standing_ = Standing::lost;
  leader_.reset();
}

std::optional<Leader> Election::observe(KvStore& store, const std::string& prefix) {
  return leader_of(store.range(oldest_of(prefix, 1)).kvs);
}

}  // namespace loco::replica
