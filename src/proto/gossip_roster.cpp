#include "loco/proto/gossip_roster.hpp"

#include <algorithm>

namespace loco::proto {

const Member* find_member(const View& view, const PeerKey& key) {
  const auto it = std::lower_bound(view.members.begin(), view.members.end(), key,
                                   [](const Member& m, const PeerKey& k) { return m.key < k; });
  return it != view.members.end() && it->key == key ? &*it : nullptr;
}

bool present_in_round(const View& view, const PeerKey& key, std::uint64_t round) {
  const Member* m = find_member(view, key);
  return m != nullptr && m->first_round <= round;
}

void GossipRoster::record(std::span<const Member> replaced, const View& current,
                          std::uint64_t removed_from_round) {
  for (const Member& before : replaced) {
    const Member* now = find_member(current, before.key);
    const std::uint64_t until = now == nullptr ? removed_from_round : now->first_round;
    if (before.first_round < until)
      replaced_.push_back(Listed{.key = before.key, .from = before.first_round, .until = until});
  }
}

std::vector<PeerKey> GossipRoster::members_of_round(const View& view, std::uint64_t round) const {
  std::vector<PeerKey> members;
  members.reserve(view.members.size());
  for (const Member& m : view.members)
    if (m.first_round <= round) members.push_back(m.key);
  const auto listed = static_cast<std::ptrdiff_t>(members.size());
  for (const Listed& r : replaced_)
    if (r.from <= round && round < r.until) members.push_back(r.key);
  std::sort(members.begin() + listed, members.end());
  std::inplace_merge(members.begin(), members.begin() + listed, members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  return members;
}

void GossipRoster::forget_before(std::uint64_t round) {
  std::erase_if(replaced_, [round](const Listed& r) { return r.until <= round; });
}

}  // namespace loco::proto
