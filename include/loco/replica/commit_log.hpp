#pragma once
// A tracker replica's commit log in etcd (docs/FORMATS.md, "A replica's keys in etcd"): one key
// per committed round, <prefix>rounds/<round, 20 digits>, so that etcd's key order is round
// order. Each is written in the same fenced transaction as the state that commits its round
// (fenced_state.hpp): once, in order, and never by a deposed leader. Its value is one line of
// JSON an operator reads with `etcdctl get --prefix /loco/<run id>/rounds/`:
//   {"round":12,"state":"<64 hex>","group":4,"epoch":8589934594,"members":4,
//    "members_hash":"<64 hex>","unix_ms":1764412345678}
// `members` and `members_hash` are the count and the BLAKE2b-256 of the keys of the view the
// state saved with the commit (the members themselves are in the state, not repeated per round).
//
// A round lost and committed again (TrackerSnapshot::lost_rounds: no live peer nor custody copy
// held it) is written again over its old entry: that key's version is then above 1.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/proto/tracker_snapshot.hpp"

namespace loco::replica {

struct CommitLogEntry {
  std::uint64_t round = 0;
  Digest state_hash{};
  std::uint32_t group_size = 0;  // 0: not known (a round settled on, not committed by a group)
  std::uint64_t epoch = 0;
  std::uint32_t members = 0;
  Digest members_hash{};
  std::uint64_t unix_ms = 0;  // when the round was committed (0: not known)
  bool operator==(const CommitLogEntry&) const = default;
};

// "<prefix>rounds/": every entry's key starts with it.
std::string commit_log_prefix(const std::string& prefix);
std::string commit_log_key(const std::string& prefix, std::uint64_t round);

std::string encode_commit_entry(const CommitLogEntry& entry);
// Throws Error(format) for a value that is not an entry (etcd's values are as untrusted as a
// file: anyone with write access to etcd can put one).
CommitLogEntry decode_commit_entry(std::string_view value);

// The entries a save of `state` adds to a log written up to `logged_through`: each round of
// (logged_through, committed_round], from the state's history (and the committed round itself
// from its committed hash when the history lacks it). None when the run went back.
std::vector<CommitLogEntry> new_commits(const proto::TrackerSnapshot& state,
                                        std::uint64_t logged_through);

}  // namespace loco::replica
