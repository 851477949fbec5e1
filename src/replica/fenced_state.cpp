#include "loco/replica/fenced_state.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/replica/commit_log.hpp"

namespace loco::replica {

std::optional<proto::TrackerSnapshot> FencedState::load() {
  Range whole = one_key(state_key());
  whole.answer_bytes = proto::kMaxSnapshotBytes;
  const RangeResult found = store_.range(whole);
  if (found.kvs.empty()) {
    logged_through_ = 0;
    return std::nullopt;
  }
  const std::string& value = found.kvs.front().value;
  const std::string where = "etcd key " + state_key();
  const auto* first = reinterpret_cast<const std::byte*>(value.data());
  proto::TrackerSnapshot state = proto::decode_snapshot({first, value.size()}, where);
  logged_through_ = state.committed_round;
  return state;
}

FencedState::Saved FencedState::save(const proto::TrackerSnapshot& state) {
  const std::vector<std::byte> bytes = proto::encode(state);  // kMaxSnapshotBytes at most
  if (election_.standing() != Election::Standing::leading) return Saved::deposed;  // resigned
  Txn txn;
  txn.success.push_back(
      Put{state_key(), std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 0});
  // The rounds this state commits, logged by the same write: both land, or neither does.
  for (const CommitLogEntry& entry : new_commits(state, logged_through_))
    txn.success.push_back(Put{commit_log_key(prefix_, entry.round), encode_commit_entry(entry), 0});
  try {
    if (election_.fenced(std::move(txn)).deposed) return Saved::deposed;
  } catch (const Error& e) {
    error_ = e.what();
    return Saved::unanswered;
  }
  // Down too when the run went back to an older round: the lost rounds are logged again when
  // they are committed again (over their old entries).
  logged_through_ = state.committed_round;
  return Saved::saved;
}

}  // namespace loco::replica
