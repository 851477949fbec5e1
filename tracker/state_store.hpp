#pragma once
// Where loco-tracker keeps its durable state: the TrackerCore's snapshot, saved after each turn in
// which the core changed it, before the messages that depend on it go out (tracker_service.hpp:
// the state file on the event loop, a replica's etcd keys on its store thread), and loaded once
// at start (by a replica: each time it becomes leader). Two stores: the state file (the default:
// one tracker) and a tracker replica's fenced keys in etcd (etcd_state.hpp), which also log each
// commit.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/proto/tracker_snapshot.hpp"

namespace loco::tracker {

// A saved state larger than this is not a loco-tracker state: the largest the format writes.
inline constexpr std::size_t kMaxStateBytes = proto::kMaxSnapshotBytes;

class StateStore {
 public:
  virtual ~StateStore() = default;
  // The saved state (its encoding at most kMaxStateBytes, else Error(format), as is a damaged
  // one); none for a new run.
  virtual std::optional<proto::TrackerSnapshot> load() = 0;
  // Saves `state` durably before returning true. False: this tracker may no longer save (a
  // deposed replica) and must announce nothing of what it tried to save. Error(io): not saved
  // this time; the run goes on and a restart falls back to the last state saved.
  virtual bool save(const proto::TrackerSnapshot& state) = 0;
  virtual std::string where() const = 0;  // for the log: a path, or etcd's key
};

// The state file, replaced atomically (checkpoint/atomic_file.hpp): a crash leaves the old or the
// new state, never a mix. A file never deposes its tracker: save() is true or throws.
class StateFile final : public StateStore {
 public:
  explicit StateFile(std::filesystem::path path) : path_(std::move(path)) {}
  std::optional<proto::TrackerSnapshot> load() override;
  bool save(const proto::TrackerSnapshot& state) override;
  std::string where() const override { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace loco::tracker
