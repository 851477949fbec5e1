#include "loco/sim/store_model.hpp"

#include <algorithm>

#include "loco/core/error.hpp"

namespace loco::sim {
namespace {

using replica::KeyValue;

// etcd's least TTL at its default timing (3/2 of a 1 s election timeout, rounded up): a grant
// below it is raised to it, as a real member does.
constexpr std::int64_t kMinTtlSeconds = 2;
constexpr std::uint64_t kStoreTrace = 0x73746f7265;  // "store"

bool in_store_range(const std::string& key, const replica::Range& range) {
  if (range.range_end.empty()) return key == range.key;
  if (key < range.key) return false;
  return range.range_end == std::string(1, '\0') || key < range.range_end;
}

class StoreClient final : public replica::KvStore {
 public:
  StoreClient(StoreModel& store, std::size_t id) : store_(store), id_(id) {}
  replica::RangeResult range(const replica::Range& range) override {
    store_.check_reachable(id_);
    return store_.range(range);
  }
  replica::TxnResult txn(const replica::Txn& txn) override {
    store_.check_reachable(id_);
    const std::int64_t before = store_.revision();
    replica::TxnResult result = store_.txn(txn);
    if (store_.revision() != before) store_.answer(id_);
    return result;
  }
  replica::Lease lease_grant(std::int64_t ttl_s) override {
    store_.check_reachable(id_);
    return store_.lease_grant(ttl_s);
  }
  std::int64_t lease_keepalive(replica::LeaseId lease) override {
    store_.check_reachable(id_);
    return store_.lease_keepalive(lease);
  }
  void lease_revoke(replica::LeaseId lease) override {
    store_.check_reachable(id_);
    store_.lease_revoke(lease);
  }

 private:
  StoreModel& store_;
  std::size_t id_;
};

}  // namespace

std::unique_ptr<replica::KvStore> StoreModel::client(std::size_t id) {
  if (cut_.size() <= id) cut_.resize(id + 1, false);
  if (lose_answer_.size() <= id) lose_answer_.resize(id + 1, false);
  return std::make_unique<StoreClient>(*this, id);
}

void StoreModel::lose_next_answer(std::size_t client, bool lose) {
  if (lose_answer_.size() <= client) lose_answer_.resize(client + 1, false);
  lose_answer_[client] = lose;
}

void StoreModel::answer(std::size_t id) {
  if (id >= lose_answer_.size() || !lose_answer_[id]) return;
  lose_answer_[id] = false;
  ++answers_lost_;
  loop_.record(kStoreTrace, 5, static_cast<std::uint64_t>(revision_));
  throw Error(ErrorCategory::network, "etcd (simulated): the write landed, its answer was lost");
}

void StoreModel::set_down(bool down) {
  if (down == down_) return;
  if (down) {
    expire();  // what expired before the outage is gone
  } else {
    for (auto& [id, lease] : leases_)
      lease.deadline = std::max(lease.deadline, loop_.now() + std::chrono::seconds(lease.ttl_s));
  }
  down_ = down;
  loop_.record(kStoreTrace, down ? 1 : 0);
}

void StoreModel::set_cut(std::size_t client, bool cut) {
  if (cut_.size() <= client) cut_.resize(client + 1, false);
  cut_[client] = cut;
}

void StoreModel::check_reachable(std::size_t id) const {
  if (down_) throw Error(ErrorCategory::network, "etcd (simulated): no member answers");
  if (id < cut_.size() && cut_[id])
    throw Error(ErrorCategory::network, "etcd (simulated): cut off from every member");
}

void StoreModel::expire() {
  if (down_) return;
  while (true) {
    auto first = leases_.end();
    for (auto it = leases_.begin(); it != leases_.end(); ++it)
      if (it->second.deadline <= loop_.now() &&
          (first == leases_.end() || it->second.deadline < first->second.deadline))
        first = it;
    if (first == leases_.end()) return;
    const replica::LeaseId id = first->first;
    leases_.erase(first);
    if (remove_keys_of(id)) ++revision_;
    loop_.record(kStoreTrace, 2, static_cast<std::uint64_t>(id));
  }
}

bool StoreModel::remove_keys_of(replica::LeaseId lease) {
  return std::erase_if(keys_, [lease](const auto& kv) { return kv.second.lease == lease; }) > 0;
}

bool StoreModel::holds(const replica::Compare& compare) const {
  const auto it = keys_.find(compare.key);
  std::int64_t field = 0;
  if (it != keys_.end()) {
    switch (compare.target) {
      case replica::Compare::Target::create_revision: field = it->second.create_revision; break;
      case replica::Compare::Target::mod_revision: field = it->second.mod_revision; break;
      case replica::Compare::Target::version: field = it->second.version; break;
    }
  }
  return field == compare.value;
}

std::vector<KeyValue> StoreModel::read(const replica::Range& range) const {
  std::vector<KeyValue> found;
  for (auto it = keys_.lower_bound(range.key);
       it != keys_.end() && in_store_range(it->first, range); ++it)
    found.push_back(it->second);
  if (range.oldest_first)
    std::stable_sort(found.begin(), found.end(), [](const KeyValue& a, const KeyValue& b) {
      return a.create_revision < b.create_revision;
    });
  return found;
}

replica::RangeResult StoreModel::peek(const replica::Range& range) {
  expire();
  std::vector<KeyValue> found = read(range);
  const auto count = static_cast<std::int64_t>(found.size());
  if (range.limit > 0 && count > range.limit) found.resize(static_cast<std::size_t>(range.limit));
  return {.revision = revision_, .kvs = std::move(found), .count = count};
}

replica::RangeResult StoreModel::range(const replica::Range& range) {
  return peek(range);
}

bool StoreModel::apply(const std::vector<replica::Op>& ops, std::int64_t revision,
                       std::vector<std::vector<KeyValue>>& ranges) {
  bool changed = false;
  for (const replica::Op& op : ops) {
    if (const auto* r = std::get_if<replica::Range>(&op)) {
      ranges.push_back(peek(*r).kvs);
    } else if (const auto* put = std::get_if<replica::Put>(&op)) {
      KeyValue& kv = keys_[put->key];
      if (kv.version == 0) {
        kv.key = put->key;
        kv.create_revision = revision;
      }
      kv.value = put->value;
      kv.mod_revision = revision;
      ++kv.version;
      kv.lease = put->lease;
      changed = true;
    } else {
      const auto& del = std::get<replica::DeleteRange>(op);
      const replica::Range span{.key = del.key, .range_end = del.range_end};
      changed |=
          std::erase_if(keys_, [&](const auto& kv) { return in_store_range(kv.first, span); }) > 0;
    }
  }
  return changed;
}

replica::TxnResult StoreModel::txn(const replica::Txn& txn) {
  expire();
  const bool succeeded = std::all_of(txn.compare.begin(), txn.compare.end(),
                                     [this](const replica::Compare& c) { return holds(c); });
  const std::vector<replica::Op>& ops = succeeded ? txn.success : txn.failure;
  for (const replica::Op& op : ops)  // refused whole, before anything is applied
    if (const auto* put = std::get_if<replica::Put>(&op);
        put != nullptr && put->lease != 0 && !leases_.contains(put->lease))
      throw Error(ErrorCategory::protocol, "etcd (simulated): requested lease not found");
  replica::TxnResult result{.succeeded = succeeded, .revision = 0, .ranges = {}};
  if (apply(ops, revision_ + 1, result.ranges)) {
    ++revision_;
    loop_.record(kStoreTrace, 3, static_cast<std::uint64_t>(revision_));
  }
  result.revision = revision_;
  return result;
}

replica::Lease StoreModel::lease_grant(std::int64_t ttl_s) {
  expire();
  const std::int64_t ttl = std::max(ttl_s, kMinTtlSeconds);
  const replica::LeaseId id = next_lease_++;
  leases_[id] = {.ttl_s = ttl, .deadline = loop_.now() + std::chrono::seconds(ttl)};
  return {.id = id, .ttl_s = ttl};
}

std::int64_t StoreModel::lease_keepalive(replica::LeaseId lease) {
  expire();
  const auto it = leases_.find(lease);
  if (it == leases_.end()) return 0;
  it->second.deadline = loop_.now() + std::chrono::seconds(it->second.ttl_s);
  return it->second.ttl_s;
}

void StoreModel::lease_revoke(replica::LeaseId lease) {
  expire();
  if (leases_.erase(lease) == 0) return;
  if (remove_keys_of(lease)) {
    ++revision_;
    loop_.record(kStoreTrace, 4, static_cast<std::uint64_t>(revision_));
  }
}

}  // namespace loco::sim
