#pragma once
// Membership views sent as changes (docs/PROTOCOL.md, "Views"): the tracker signs one delta per
// broadcast (the members removed, and those added or changed, since the last broadcast) instead
// of the whole member list, so a change among N members costs O(changes) bytes and work per
// member instead of O(N). Pure functions; the tracker core and the peer's TrackerClient use them.
//
// MembersDigest is an order-independent digest of a member list that both ends update member by
// member: the lane-wise sum, modulo 2^64, of BLAKE2b-256 of each member's fields. It is not what
// keeps views honest (the tracker's signature does); it lets a peer check in O(changes) that the
// list it rebuilt from its base and a delta is the tracker's, and ask for the full view if not.

#include <array>
#include <cstdint>
#include <unordered_map>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

// BLAKE2b-256 of a member's fields as four 64-bit lanes: what MembersDigest sums.
using MemberLanes = std::array<std::uint64_t, 4>;

// Remembers the lanes of the member entries hashed before, so that the tracker clients of one
// process that are handed the same views (the simulator's thousand peers) hash each entry once,
// not once each: every newcomer's full view, every delta's new and replaced entries. A hit needs
// an entry equal field by field, whose lanes are those a fresh hash gives, so sharing a memo
// changes no outcome. Up to `capacity` entries, then it starts again empty. Not thread-safe: one
// per thread. A real peer holds one tracker client and has no use for it.
class MemberLanesMemo {
 public:
  explicit MemberLanesMemo(std::size_t capacity = 16384);
  MemberLanes lanes(const Member& m);
  std::size_t hits() const { return hits_; }

 private:
  // Simulated keys are drawn uniformly: their first eight bytes spread the entries.
  struct EntryHash {
    std::size_t operator()(const Member& m) const;
  };
  std::unordered_map<Member, MemberLanes, EntryHash> lanes_;
  std::size_t capacity_;
  std::size_t hits_ = 0;
};

// `memo`, where given, answers for the entries it has hashed before (MemberLanesMemo).
class MembersDigest {
 public:
  static MembersDigest of(std::span<const Member> members, MemberLanesMemo* memo = nullptr);
  void add(const Member& m, MemberLanesMemo* memo = nullptr);
  void remove(const Member& m, MemberLanesMemo* memo = nullptr);
  Digest value() const;
  bool operator==(const MembersDigest&) const = default;

 private:
  std::array<std::uint64_t, 4> lanes_{};
};

// The delta from `from` to `to` (both ordered by key, to.epoch > from.epoch), with the digest of
// `to`'s members.
ViewDelta view_delta(const View& from, const View& to, const MembersDigest& to_digest);

// Applies `delta` (its lists ordered by key, as open_signed_view_delta checks) to `view` (whose
// digest is `digest`), both updated in place. False, with both unchanged, when the delta does not
// start from `view`'s epoch, or the list it gives does not have the delta's digest (a removed
// member that is not there, a gap): ask for the full view. The check costs O(changes x log
// members); so does the update when no member comes or goes; a member or two in or out shift the
// entries after them, more rebuild the list in one pass. `memo`: as MembersDigest's.
bool apply_view_delta(View& view, MembersDigest& digest, const ViewDelta& delta,
                      MemberLanesMemo* memo = nullptr);

}  // namespace loco::proto
