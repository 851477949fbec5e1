#pragma once
// The tracker's round decisions as pure functions of (now, state), so each rule is tested with an
// injected clock and no network.

#include <map>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/secure/identity.hpp"

namespace loco::proto {

using PeerKey = secure::PublicKey;

struct ReadyEntry {
  float update_norm = 0;
  float loss = 0;  // as the member says (Ready::loss): for the status page only
  std::uint64_t upload_bps = 0;
  std::uint64_t tokens = 0;  // as the member claims (Ready::tokens), clamped at formation
  TimePoint at{};
};

// Counts, not the members themselves: the tracker asks after every input it handles, and copying
// 1,000 members' entries each time was a third of the simulator's 1,000-peer hour.
struct QuorumInput {
  TimePoint now{};
  std::size_t live = 0;      // live members
  std::size_t eligible = 0;  // live members holding the run's current state
  std::size_t ready = 0;     // eligible members ready for the next round
  // Live members fetching the run's state (newcomers, and members whose state differed): waited
  // for as members not yet ready are, or a run whose rounds come faster than a state downloads
  // would leave them fetching a state the run has already left, forever.
  std::size_t catching_up = 0;
  // Every live member of the last committed round's group is among the ready ones.
  bool previous_group_ready = true;
  TimePoint first_ready = kNever;  // when the first of them said ready
  std::size_t min_peers = 1;
  Duration join_timeout{};
  // Rounds bounded by time: a member still training this long after the first is ready is not
  // waited for (0: join_timeout). Such a run counts no member catching up (tracker_rounds.cpp).
  Duration straggler_wait{};

  bool operator==(const QuorumInput&) const = default;
};

// When the next round's group may form:
// - at once (fast path) when every eligible member is ready, every member of the previous group
//   among them, none is catching up, and there are at least min_peers;
// - when only members catching up are missing, join_timeout after the first ready one;
// - otherwise once at least min_peers are ready, more than half of the live members are ready,
//   and join_timeout (straggler_wait, when set) has passed since the first of them said so;
// - never (kNever) while too few are ready: the time returned is then the earliest moment the
//   rule could hold if nothing else changed.
TimePoint formation_time(const QuorumInput& in);

// When the ready members are let go to keep training (abort, no retry) because fewer than
// min_peers of them are ready: join_timeout after the first said so. kNever when none are ready
// or enough are.
TimePoint release_time(const QuorumInput& in);

// Splits ready members into the group and those refused for a broken or outsized update: a norm
// that is NaN or infinite, or above `limit` times the reference: the upper median of the
// declared norms, at least `floor` (from the rounds before, so that a group declaring norms of 0
// does not switch the bound off). `refused` gets a reason for each. Declared norms are claims:
// the receivers check each update's real norm against the same bound (all_reduce.hpp).
struct Screened {
  std::vector<PeerKey> group;
  std::map<PeerKey, std::string> refused;
  float median_norm = 0;  // the reference the limit was applied to
};
Screened screen_updates(const std::map<PeerKey, ReadyEntry>& ready, float limit, float floor);

// How many contributions of a group of `members` a trimmed mean leaves out of each coordinate on
// each side: ceil(trim × members), at most (members − 1) / 2 so that one is always left; 0 for a
// trim of 0.
std::uint32_t trim_count(float trim, std::size_t members);

// The ring order of a group: by declared upload bandwidth, fastest first, then by key, so every
// peer derives the same order.
std::vector<PeerKey> ring_order(std::vector<PeerKey> group,
                                const std::map<PeerKey, ReadyEntry>& ready);

}  // namespace loco::proto
