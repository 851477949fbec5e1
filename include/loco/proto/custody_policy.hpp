#pragma once
// Checkpoint custody's decisions, as pure functions (docs/TRACKER.md, "Checkpoint custody"):
// when the tracker pulls a copy of the run's state, which stored copies it deletes, and which
// state the run goes on from when no live peer holds the committed one.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "loco/core/hash.hpp"

namespace loco::proto {

// A custody copy the tracker holds on disk.
struct CustodyEntry {
  std::uint64_t round = 0;
  Digest state_hash{};
  std::uint64_t bytes = 0;  // of the state (the file is a little larger)
  bool operator==(const CustodyEntry&) const = default;
};

// The round at or after which the next copy is due: the next multiple of `every` after the last
// stored round (a pull that slipped from round 10 to 11 still leaves the next one due at 20).
// Nothing stored yet: `every`. `every` must be positive.
std::uint64_t next_custody_round(std::optional<std::uint64_t> last_stored, std::uint32_t every);

// Whether the committed round is due for a copy: custody on (`every` > 0), past round 0 (the
// genesis state is the settings' to recompute) and at or past next_custody_round(), or the run's
// final round (train/run_end.hpp; 0: the run declares none) not stored yet: the trained model is
// kept whatever `every` says, before the run's last peers leave.
bool custody_due(std::uint64_t committed_round, std::optional<std::uint64_t> last_stored,
                 std::uint32_t every, std::uint64_t final_round = 0);

// The copies to delete: all but the newest `keep`, then the oldest of those left while they
// take more than `max_bytes`. The newest is never deleted (`keep` is at least 1, and the
// operator's limits make one copy fit the budget). Returned oldest first.
std::vector<CustodyEntry> custody_to_prune(std::vector<CustodyEntry> stored, std::uint32_t keep,
                                           std::uint64_t max_bytes);

// A state some live members hold, and how many of them.
struct HeldState {
  std::uint64_t round = 0;
  Digest hash{};
  std::size_t holders = 0;
};

// Where the run goes on from when no live member holds the committed state.
struct StateSource {
  std::uint64_t round = 0;
  Digest hash{};
  bool custody = false;  // the tracker's custody copy: the tracker serves it
  bool operator==(const StateSource&) const = default;
};

// The newest state available: the members' newest (most holders among equals, then the smaller
// hash), unless the custody copy is at least as new: a copy of a committed majority state beats a
// member's unconfirmed state of the same round. `held` must not be empty.
StateSource settle_state(std::span<const HeldState> held, std::optional<CustodyEntry> custody);

}  // namespace loco::proto
