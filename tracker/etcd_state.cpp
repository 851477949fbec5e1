#include "etcd_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commit_log.hpp"
#include "loco/core/error.hpp"

namespace loco::tracker {

std::optional<proto::TrackerSnapshot> EtcdState::load() {
  const etcd::RangeResult found = store_.range(etcd::one_key(state_key()));
  if (found.kvs.empty()) {
    logged_through_ = 0;
    return std::nullopt;
  }
  const std::string& value = found.kvs.front().value;
  if (value.size() > kMaxStateBytes)
    throw Error(ErrorCategory::format,
                fmt::format("{} holds {} bytes: not a loco-tracker state", where(), value.size()));
  const auto* first = reinterpret_cast<const std::byte*>(value.data());
  proto::TrackerSnapshot state = proto::decode_snapshot({first, value.size()}, where());
  logged_through_ = state.committed_round;
  return state;
}

bool EtcdState::save(const proto::TrackerSnapshot& state) {
  const std::vector<std::byte> bytes = proto::encode(state);
  if (bytes.size() > kMaxStateBytes)
    throw Error(ErrorCategory::resource,
                fmt::format("a state of {} bytes, over the {} one etcd request holds", bytes.size(),
                            kMaxStateBytes));
  if (election_.standing() != etcd::Election::Standing::leading) return false;  // resigned, lost
  etcd::Txn txn;
  txn.success.push_back(etcd::Put{
      state_key(), std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 0});
  // The rounds this state commits, logged by the same write: both land, or neither does.
  for (const CommitLogEntry& entry : new_commits(state, logged_through_))
    txn.success.push_back(
        etcd::Put{commit_log_key(prefix_, entry.round), encode_commit_entry(entry), 0});
  try {
    if (election_.fenced(std::move(txn)).deposed) return false;
  } catch (const Error& e) {
    // Written or not, it cannot be announced: a leader that cannot write cannot prove it leads.
    spdlog::error("cannot save the state to {}: {}", where(), e.what());
    return false;
  }
  // Down too when the run went back to an older round: the lost rounds are logged again when
  // they are committed again (over their old entries).
  logged_through_ = state.committed_round;
  return true;
}

}  // namespace loco::tracker
