#include "loco/proto/view_delta.hpp"

#include <algorithm>
#include <cstring>

namespace loco::proto {
namespace {

std::array<std::uint64_t, 4> member_lanes(const Member& m) {
  Blake2b h;
  h.update(std::as_bytes(std::span(m.key.bytes)));
  h.update_u64(m.address.size());
  h.update(std::as_bytes(std::span(m.address)));
  h.update_u64(m.shard);
  h.update_u64(m.upload_bps);
  h.update_u64(m.first_round);
  h.update_u64(static_cast<std::uint64_t>(m.reachability));
  const Digest d = h.finish();
  std::array<std::uint64_t, 4> lanes{};
  std::memcpy(lanes.data(), d.data(), d.size());
  return lanes;
}

bool key_less(const Member& a, const Member& b) {
  return a.key < b.key;
}

// One merge of `members` (ordered by key) with `delta`. Updates `digest` and fills `out` (moving
// the members kept out of `members`), each when given: a first pass checks the digest without a
// copy, a second builds the list. False where a key is both removed and changed, or a removed key
// is not there.
bool merge_delta(std::vector<Member>& members, const ViewDelta& delta, MembersDigest* digest,
                 std::vector<Member>* out) {
  auto removed = delta.removed.begin();
  auto changed = delta.changed.begin();
  const auto add = [&](const Member& m) {
    if (digest != nullptr) digest->add(m);
    if (out != nullptr) out->push_back(m);
  };
  for (Member& m : members) {
    while (changed != delta.changed.end() && changed->key < m.key) add(*changed++);
    const bool is_removed = removed != delta.removed.end() && *removed == m.key;
    if (is_removed) ++removed;
    const bool is_changed = changed != delta.changed.end() && changed->key == m.key;
    if (is_removed && is_changed) return false;  // a delta never does both
    if ((is_removed || is_changed) && digest != nullptr) digest->remove(m);
    if (is_changed)
      add(*changed++);
    else if (!is_removed && out != nullptr)
      out->push_back(std::move(m));
  }
  for (; changed != delta.changed.end(); ++changed) add(*changed);
  return removed == delta.removed.end();
}

}  // namespace

MembersDigest MembersDigest::of(std::span<const Member> members) {
  MembersDigest d;
  for (const Member& m : members) d.add(m);
  return d;
}

void MembersDigest::add(const Member& m) {
  const auto lanes = member_lanes(m);
  for (std::size_t i = 0; i < lanes_.size(); ++i) lanes_[i] += lanes[i];
}

void MembersDigest::remove(const Member& m) {
  const auto lanes = member_lanes(m);
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

bool apply_view_delta(View& view, MembersDigest& digest, const ViewDelta& delta) {
  if (delta.base_epoch != view.epoch) return false;
  MembersDigest next = digest;
  // A removed member this view does not hold, or another list than the tracker's: a gap.
  if (!merge_delta(view.members, delta, &next, nullptr) || next.value() != delta.members_digest)
    return false;
  std::vector<Member> members;
  members.reserve(view.members.size() + delta.changed.size());
  merge_delta(view.members, delta, nullptr, &members);
  view.members = std::move(members);
  view.epoch = delta.epoch;
  digest = next;
  return true;
}

}  // namespace loco::proto
