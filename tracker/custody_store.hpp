#pragma once
// The tracker's custody copies on disk (docs/TRACKER.md, "Checkpoint custody"): one file per
// pulled round, `round-<round>.custody` (proto/custody_file.hpp), in a folder next to the state
// file, written atomically and pruned to the newest `keep` within a disk budget
// (proto::custody_to_prune). At start the folder is read back and every file checked against its
// manifest, so a restarted tracker knows the copies it holds without trusting its state file for
// them; a damaged or foreign file is logged and left alone (never served, never deleted).
// Threads: the tracker's io thread (a write blocks it for the copy's size at disk speed: custody
// is for small models).

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loco/proto/custody_file.hpp"
#include "loco/proto/custody_policy.hpp"
#include "loco/proto/custody_pull.hpp"

namespace loco::tracker {

struct CustodyLimits {
  std::uint32_t keep = 3;
  std::uint64_t max_disk_bytes = std::uint64_t{1} << 30;
  std::uint64_t max_state_bytes = std::uint64_t{64} << 20;
};

class CustodyStore {
 public:
  // Creates `folder` if needed and reads the copies of run `run_id` in it (Error(io) when the
  // folder cannot be made or listed).
  CustodyStore(std::filesystem::path folder, std::string run_id, CustodyLimits limits);

  // Writes `copy` (Error(io) on failure, the older copies untouched), then prunes.
  void add(const proto::CustodyCopy& copy);
  // The copies held, oldest first.
  const std::vector<proto::CustodyEntry>& entries() const { return entries_; }
  // The copy of `round`, read again and checked (Error(config) when none is held, Error(format)
  // when it no longer checks).
  proto::CustodyFile read(std::uint64_t round) const;
  // The newest copy found at start, whole, for the core to serve (taken once).
  std::optional<proto::CustodyFile> take_newest() { return std::exchange(newest_, std::nullopt); }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path path_of(std::uint64_t round) const;
  void scan();
  void prune();

  std::filesystem::path folder_;
  std::string run_id_;
  CustodyLimits limits_;
  std::vector<proto::CustodyEntry> entries_;
  std::optional<proto::CustodyFile> newest_;
};

}  // namespace loco::tracker
