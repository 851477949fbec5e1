#pragma once
// Gossip's roster (docs/DESIGN.md §1.6): the peers a round's grouping (gossip_groups.hpp) places.
// Every member of a round must group it over the same set, yet members reach a round minutes
// apart and the membership changes meanwhile; a grouping over each peer's latest view split the
// groups whenever a view came between two members' starts (docs/SCALE.md). So the tracker stamps
// each change with the round it takes effect from, gossip_round_lead rounds past the newest round
// any member has reported (TrackerCoreConfig): a member is listed from its Member::first_round
// (stamped at admission, and again when it joins again: a new process), and a member a view
// delta removes is listed until the delta's removed_from_round. A peer keeps the entries its
// views replaced until it is past them; the roster of round r is then the same at every peer
// that got the views before it grouped round r.
//
// A member on the roster of a round need not take part in it (present_in_round): one gone
// (removed, or back as a new process listed from a later round) leaves the others of its group
// alone for the round, each as soon as a view tells it. After a tracker restart every member is
// listed anew (the restarted tracker stamps everyone again), so a round or two are applied alone.

#include <cstdint>
#include <span>
#include <vector>

#include "loco/proto/round_formation.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {

class GossipRoster {
 public:
  // `replaced`: entries as they were before the view became `current` (those a delta removed or
  // changed, or a whole earlier view). An entry gone from `current` stays listed until
  // `removed_from_round` (a full view carries none: 0, gone at once); one listed again from a
  // later round stays listed from its old first round until then.
  void record(std::span<const Member> replaced, const View& current,
              std::uint64_t removed_from_round);

  // The members round `round` groups, ordered by key.
  std::vector<PeerKey> members_of_round(const View& view, std::uint64_t round) const;

  // Entries that no round from `round` on lists: dropped.
  void forget_before(std::uint64_t round);

 private:
  struct Listed {
    PeerKey key;
    std::uint64_t from = 0;   // the first round it was listed for
    std::uint64_t until = 0;  // the first round it is not
  };
  std::vector<Listed> replaced_;
};

// `key` takes part in round `round` under `view`: listed, and from that round or earlier.
bool present_in_round(const View& view, const PeerKey& key, std::uint64_t round);

// The entry of `key` in `view` (ordered by key), or null.
const Member* find_member(const View& view, const PeerKey& key);

}  // namespace loco::proto
