#include "loco/proto/view_delta.hpp"

#include <algorithm>
#include <cstring>

namespace loco::proto {
namespace {

MemberLanes member_lanes(const Member& m) {
  Blake2b h;
  h.update(std::as_bytes(std::span(m.key.bytes)));
  h.update_u64(m.address.size());
  h.update(std::as_bytes(std::span(m.address)));
  h.update_u64(m.shard);
  h.update_u64(m.upload_bps);
  h.update_u64(m.first_round);
  h.update_u64(static_cast<std::uint64_t>(m.reachability));
  const Digest d = h.finish();
  MemberLanes lanes{};
  std::memcpy(lanes.data(), d.data(), d.size());
  return lanes;
}

bool key_less(const Member& a, const Member& b) {
  return a.key < b.key;
}

// The list `members` (ordered by key) becomes with `delta`, built by one merge that moves the
// members kept. `delta` was checked against `members` (apply_view_delta).
std::vector<Member> merge_delta(std::vector<Member>& members, const ViewDelta& delta) {
  std::vector<Member> out;
  out.reserve(members.size() + delta.changed.size());
  auto removed = delta.removed.begin();
  auto changed = delta.changed.begin();
  for (Member& m : members) {
    while (changed != delta.changed.end() && changed->key < m.key) out.push_back(*changed++);
    if (removed != delta.removed.end() && *removed == m.key) {
      ++removed;
    } else if (changed != delta.changed.end() && changed->key == m.key) {
      out.push_back(*changed++);
    } else {
      out.push_back(std::move(m));
    }
  }
  out.insert(out.end(), changed, delta.changed.end());
  return out;
}

// The entry of `key` in `members` (ordered by key), or end().
std::vector<Member>::iterator find_entry(std::vector<Member>& members, const PeerKey& key) {
  const auto it = std::ranges::lower_bound(members, key, {}, &Member::key);
  return it != members.end() && it->key == key ? it : members.end();
}

// `delta` (checked against `members`) applied in place: each member removed or added shifts the
// entries after it, half the list on average, where merge_delta() moves all of it into a new one.
void apply_in_place(std::vector<Member>& members, const ViewDelta& delta) {
  for (const PeerKey& key : delta.removed) members.erase(find_entry(members, key));
  for (const Member& m : delta.changed) {
    const auto it = std::ranges::lower_bound(members, m.key, {}, &Member::key);
    if (it != members.end() && it->key == m.key)
      *it = m;
    else
      members.insert(it, m);
  }
}

}  // namespace

MemberLanesMemo::MemberLanesMemo(std::size_t capacity) : capacity_(capacity) {}

std::size_t MemberLanesMemo::EntryHash::operator()(const Member& m) const {
  std::size_t h = 0;
  std::memcpy(&h, m.key.bytes.data(), sizeof h);
  return h ^ static_cast<std::size_t>(m.reachability);  // an entry's versions, apart
}

MemberLanes MemberLanesMemo::lanes(const Member& m) {
  if (const auto it = lanes_.find(m); it != lanes_.end()) {
    ++hits_;
    return it->second;
  }
  if (lanes_.size() >= capacity_) lanes_.clear();
  return lanes_.emplace(m, member_lanes(m)).first->second;
}

MembersDigest MembersDigest::of(std::span<const Member> members, MemberLanesMemo* memo) {
  MembersDigest d;
  for (const Member& m : members) d.add(m, memo);
  return d;
}

void MembersDigest::add(const Member& m, MemberLanesMemo* memo) {
  const MemberLanes lanes = memo ? memo->lanes(m) : member_lanes(m);
  for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i] += lanes[i];
}

void MembersDigest::remove(const Member& m, MemberLanesMemo* memo) {
  const MemberLanes lanes = memo ? memo->lanes(m) : member_lanes(m);
  for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i] -= lanes[i];
}

Digest MembersDigest::value() const {
  Digest d{};
  std::memcpy(d.data(), lanes_.data(), d.size());
  return d;
}

ViewDelta view_delta(const View& from, const View& to, const MembersDigest& to_digest) {
  ViewDelta delta{.base_epoch = from.epoch,
                  .epoch = to.epoch,
                  .removed = {},
                  .changed = {},
                  .members_digest = to_digest.value()};
  // One merge of the two ordered lists.
  auto a = from.members.begin();
  auto b = to.members.begin();
  while (a != from.members.end() || b != to.members.end()) {
    if (b == to.members.end() || (a != from.members.end() && key_less(*a, *b))) {
      delta.removed.push_back((a++)->key);
    } else if (a == from.members.end() || key_less(*b, *a)) {
      delta.changed.push_back(*b++);
    } else {
      if (!(*a == *b)) delta.changed.push_back(*b);
      ++a;
      ++b;
    }
  }
  return delta;
}

// O(changes x log members) to check, and to apply when no member comes or goes (a newcomer's
// reachability, measured after its join); a member or two in or out shift part of the list, more
// rebuild it: every member applies every delta, and the simulator runs a thousand members.
bool apply_view_delta(View& view, MembersDigest& digest, const ViewDelta& delta,
                      MemberLanesMemo* memo) {
  if (delta.base_epoch != view.epoch) return false;
  MembersDigest next = digest;
  auto changed = delta.changed.begin();
  for (const PeerKey& key : delta.removed) {
    const auto it = find_entry(view.members, key);
    if (it == view.members.end()) return false;  // not there: another base than the tracker's
    while (changed != delta.changed.end() && changed->key < key) ++changed;
    if (changed != delta.changed.end() && changed->key == key) return false;  // never both
    next.remove(*it, memo);
  }
  std::size_t added = 0;
  for (const Member& m : delta.changed) {
    const auto it = find_entry(view.members, m.key);
    if (it != view.members.end())
      next.remove(*it, memo);
    else
      ++added;
    next.add(m, memo);
  }
  if (next.value() != delta.members_digest) return false;  // another list than the tracker's
  // Up to two members in or out (a join, a leave, a join and its reachability: most deltas after
  // the join burst) cost less shifted in place than rebuilt.
  if (delta.removed.size() + added <= 2)
    apply_in_place(view.members, delta);
  else
    view.members = merge_delta(view.members, delta);
  view.epoch = delta.epoch;
  digest = next;
  return true;
}

}  // namespace loco::proto
