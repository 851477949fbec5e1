#pragma once
// What the tracker saves to survive a crash or a restart: enough to continue the same run (its
// id and settings, the last committed round and its hash, the genesis hash, the epoch), the
// recent rounds for the status page, and what it holds against keys (bars, benches, disputes:
// docs/SECURITY.md), so that a restart does not let a proven liar back in. Members are saved by
// key only: live peers reconnect and join again, and a restarted tracker waits a short grace for
// them before it forms a round (TrackerCoreConfig::restart_grace).
//
// File format (little-endian, written atomically by the server):
//   "loco-tracker-state" ‖ u8 version ‖ fields below ‖ BLAKE2b-256 of everything before it.
// Version 3 added the keys held against, version 4 the members; files of versions 1 to 3 are
// still read.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

struct RoundRecord {
  std::uint64_t round = 0;
  std::uint64_t unix_ms = 0;  // when it was committed (the driver's wall clock; display only)
  std::uint32_t group_size = 0;
  // The mean of the losses its committing members said their updates were trained at (Ready::
  // loss), trimmed by the run's trim share on each side (a claim: display only); NaN when none
  // said.
  float mean_loss = 0;
  Digest state_hash{};
  // The same record: an unknown loss equals an unknown loss (NaN bits), as a saved file must.
  bool operator==(const RoundRecord& other) const {
    return round == other.round && unix_ms == other.unix_ms && group_size == other.group_size &&
           std::bit_cast<std::uint32_t>(mean_loss) ==
               std::bit_cast<std::uint32_t>(other.mean_loss) &&
           state_hash == other.state_hash;
  }
};

// Rounds the run committed and then lost: when the tracker had to go on, no live peer and no
// custody copy held them, and the run went on from round went_back_to (they are committed again,
// with other states).
struct LostRounds {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::uint64_t went_back_to = 0;
  std::uint64_t unix_ms = 0;  // when (the driver's wall clock)
  bool operator==(const LostRounds&) const = default;
};

// A key the tracker refuses, for remaining_ms more (a restart keeps counting from there).
struct BarredKey {
  PeerKey key{};
  std::uint64_t remaining_ms = 0;
  bool operator==(const BarredKey&) const = default;
};

// A member that sits rounds out until `until` (inclusive) if every round attempt from the save
// commits (a bench counts the rounds the run attempts); `times` doubles its next bench.
struct BenchedKey {
  PeerKey key{};
  std::uint64_t until = 0;
  std::uint32_t times = 0;
  bool operator==(const BenchedKey&) const = default;
};

// An owner and a checker that signed different means for one segment (first < second).
struct DisputedPair {
  PeerKey first{};
  PeerKey second{};
  bool operator==(const DisputedPair&) const = default;
};

struct TrackerSnapshot {
  static constexpr std::size_t kMaxHistory = 512;
  static constexpr std::size_t kMaxLostRounds = 16;
  // Of each kind of key held against (the tracker core keeps no more).
  static constexpr std::size_t kMaxHeldAgainst = 65536;

  std::string run_id;
  Digest settings_digest{};       // of the run's settings: a restart under others is refused
  std::optional<Digest> genesis;  // the round-0 state hash (none in files of older releases)
  std::uint64_t epoch = 0;
  std::uint64_t committed_round = 0;
  Digest committed_hash{};              // the majority state hash of committed_round
  std::vector<RoundRecord> history;     // the last kMaxHistory committed rounds, oldest first
  std::vector<LostRounds> lost_rounds;  // the newest kMaxLostRounds, oldest first (files of
                                        // format 1 have none)
  std::vector<BarredKey> barred;        // files of formats 1 and 2 have none, nor these two:
  std::vector<BenchedKey> benched;
  std::vector<DisputedPair> disputes;
  // The members of the view when it was saved (at most kMaxMembers; files of formats 1 to 3 have
  // none).
  std::vector<PeerKey> members;

  bool operator==(const TrackerSnapshot&) const = default;
};

// The largest encode() writes: every list full and a run id of kMaxTextBytes (the longest the
// reader takes; loco-tracker refuses a longer --run.id). A state file, or a replica's state in
// etcd, must hold this much: 10,049,728 bytes (9.6 MiB), nearly all of it the keys held against.
inline constexpr std::size_t kMaxSnapshotBytes =
    18 + 1 + (4 + kMaxTextBytes) + 32 + (1 + 32) + 8 + 8 + 32                    // magic .. hash
    + (4 + TrackerSnapshot::kMaxHistory * (8 + 8 + 4 + 4 + 32))                  // history
    + (4 + TrackerSnapshot::kMaxLostRounds * 4 * 8)                              // lost rounds
    + 3 * 4 + TrackerSnapshot::kMaxHeldAgainst * ((32 + 8) + (32 + 8 + 4) + 64)  // held against
    + (4 + kMaxMembers * 32)                                                     // members
    + 32;                                                                        // checksum

Digest settings_digest(const std::vector<Setting>& settings);

std::vector<std::byte> encode(const TrackerSnapshot& snapshot);
// Throws Error(format) for a damaged or foreign file (`name` names it).
TrackerSnapshot decode_snapshot(std::span<const std::byte> bytes, std::string_view name);

}  // namespace loco::proto
