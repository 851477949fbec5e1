// Views as deltas: the pure diff and apply (proto/view_delta.hpp), the signed delta's codec, and
// the tracker core and client exchanging them in virtual time (a burst of joins coalesced into one
// broadcast, a gap answered with the full view).

#include "loco/proto/view_delta.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

Member member(std::uint8_t n, std::uint32_t shard = 0) {
  return Member{.key = key(n).public_key(),
                .address = "10.0.0." + std::to_string(n) + ":7000",
                .shard = shard,
                .upload_bps = 1000u * n};
}

View view_of(std::uint64_t epoch, std::vector<Member> members) {
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.key < b.key; });
  return View{.epoch = epoch, .members = std::move(members)};
}

TEST(ViewDelta, ApplyingTheDiffGivesTheNewViewAndItsDigest) {
  const View from = view_of(4, {member(1), member(2), member(3), member(4)});
  // 2 left, 3 changed its address, 5 and 6 joined.
  Member moved = member(3);
  moved.address = "10.9.9.9:7000";
  const View to = view_of(9, {member(1), moved, member(4), member(5), member(6)});
  const ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  EXPECT_EQ(delta.base_epoch, 4u);
  EXPECT_EQ(delta.epoch, 9u);
  EXPECT_EQ(delta.removed, std::vector<secure::PublicKey>{key(2).public_key()});
  EXPECT_EQ(delta.changed.size(), 3u);  // 3, 5 and 6; 1 and 4 are unchanged

  View held = from;
  MembersDigest digest = MembersDigest::of(held.members);
  ASSERT_TRUE(apply_view_delta(held, digest, delta));
  EXPECT_EQ(held, to);
  EXPECT_EQ(digest, MembersDigest::of(to.members));
}

TEST(ViewDelta, TheDigestIgnoresOrderButNotAnyField) {
  std::vector<Member> a{member(1), member(2), member(3)};
  std::vector<Member> b{member(3), member(1), member(2)};
  EXPECT_EQ(MembersDigest::of(a), MembersDigest::of(b));
  b[0].upload_bps += 1;
  EXPECT_NE(MembersDigest::of(a), MembersDigest::of(b));
}

TEST(ViewDelta, ADeltaFromAnotherBaseOrToAnotherListIsNotApplied) {
  const View from = view_of(4, {member(1), member(2)});
  const View to = view_of(5, {member(1), member(3)});
  const ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));

  // A view that missed a change: another epoch.
  View other_epoch = view_of(3, {member(1), member(2)});
  MembersDigest d1 = MembersDigest::of(other_epoch.members);
  EXPECT_FALSE(apply_view_delta(other_epoch, d1, delta));
  EXPECT_EQ(other_epoch.epoch, 3u) << "left as it was";

  // The right epoch, but another list (it would rebuild a list the tracker does not hold).
  View other_list = view_of(4, {member(1), member(2), member(7)});
  MembersDigest d2 = MembersDigest::of(other_list.members);
  const View before = other_list;
  EXPECT_FALSE(apply_view_delta(other_list, d2, delta));
  EXPECT_EQ(other_list, before);

  // Removing a member the view does not hold.
  View missing = view_of(4, {member(1)});
  MembersDigest d3 = MembersDigest::of(missing.members);
  EXPECT_FALSE(apply_view_delta(missing, d3, delta));
}

// A delta that changes entries only (a newcomer's reachability, measured after its join):
// applied in place, without rebuilding the list every member holds.
TEST(ViewDelta, ADeltaThatOnlyChangesEntriesIsAppliedInPlace) {
  const View from = view_of(4, {member(1), member(2), member(3)});
  View to = from;
  to.epoch = 5;
  to.members[1].reachability = Reachability::reachable;
  const ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  ASSERT_EQ(delta.changed.size(), 1u);

  View held = from;
  MembersDigest digest = MembersDigest::of(held.members);
  const Member* entries = held.members.data();
  ASSERT_TRUE(apply_view_delta(held, digest, delta));
  EXPECT_EQ(held, to);
  EXPECT_EQ(digest, MembersDigest::of(to.members));
  EXPECT_EQ(held.members.data(), entries) << "the list was rebuilt";
}

TEST(ViewDelta, ADeltaThatRemovesAndChangesOneKeyIsNotApplied) {
  const View from = view_of(4, {member(1), member(2)});
  Member changed = member(2);
  changed.upload_bps += 1;
  const View to = view_of(5, {member(1), changed});
  ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  delta.removed.push_back(member(2).key);

  View held = from;
  MembersDigest digest = MembersDigest::of(held.members);
  EXPECT_FALSE(apply_view_delta(held, digest, delta));
  EXPECT_EQ(held, from);
}

// Random pairs of lists (members come, go, change a field, or stay; a third of the trials only
// change fields): the delta rebuilds the second list from the first, whichever way
// apply_view_delta takes.
TEST(ViewDelta, RandomDeltasRebuildTheTrackersList) {
  Rng rng(50);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Member> a;
    std::vector<Member> b;
    for (std::uint8_t n = 1; n <= 40; ++n) {
      const std::uint64_t draw = rng.below(8);
      Member m = member(n);
      if (draw != 0 || trial % 3 != 0) a.push_back(m);  // 0: joins, in every third trial
      if (draw == 2) m.reachability = Reachability::unreachable;
      if (draw == 3) m.upload_bps += 1;
      if (draw != 1 || trial % 2 == 1) b.push_back(m);  // 1: leaves, in odd trials only
    }
    const View from = view_of(7, a);
    const View to = view_of(8, b);
    View held = from;
    MembersDigest digest = MembersDigest::of(held.members);
    ASSERT_TRUE(apply_view_delta(held, digest, view_delta(from, to, MembersDigest::of(b))))
        << "trial " << trial;
    EXPECT_EQ(held, to) << "trial " << trial;
    EXPECT_EQ(digest, MembersDigest::of(to.members)) << "trial " << trial;
  }
}

// Deltas with one or two members in or out (joins, leaves, a join beside a changed entry), at
// either end of the list or inside it: apply_view_delta shifts them in place, and the list and
// digest must be the tracker's all the same.
TEST(ViewDelta, DeltasWithAMemberOrTwoInOrOutRebuildTheTrackersList) {
  Rng rng(51);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<Member> a;
    for (std::uint8_t n = 1; n <= 12; ++n) a.push_back(member(n));
    std::vector<Member> b = a;
    const std::uint64_t ins_and_outs = 1 + rng.below(2);
    for (std::uint64_t i = 0; i < ins_and_outs; ++i) {
      if (rng.below(2) == 0)
        b.push_back(member(static_cast<std::uint8_t>(13 + i)));  // joins (anywhere in key order)
      else
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(rng.below(b.size())));  // leaves
    }
    if (rng.below(2) == 0) b[rng.below(b.size())].reachability = Reachability::reachable;
    const View from = view_of(7, a);
    const View to = view_of(8, b);
    View held = from;
    MembersDigest digest = MembersDigest::of(held.members);
    ASSERT_TRUE(apply_view_delta(held, digest, view_delta(from, to, MembersDigest::of(b))))
        << "trial " << trial;
    EXPECT_EQ(held, to) << "trial " << trial;
    EXPECT_EQ(digest, MembersDigest::of(to.members)) << "trial " << trial;
  }
}

// The simulator's clients share a memo of member entries' hashes: a view and deltas applied with
// it give the digest a fresh hash gives, an entry that differs in one field is hashed anew, and a
// full memo starts again without changing a digest.
TEST(ViewDelta, AMemoOfEntryHashesGivesTheDigestsAFreshHashGives) {
  const View from = view_of(4, {member(1), member(2), member(3)});
  View to = view_of(5, {member(1), member(3), member(4)});
  to.members[1].reachability = Reachability::unreachable;
  const ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  for (const std::size_t capacity : {std::size_t{2}, std::size_t{64}}) {
    MemberLanesMemo memo(capacity);
    for (int peer = 0; peer < 3; ++peer) {  // three clients handed the same view and delta
      View held = from;
      MembersDigest digest = MembersDigest::of(held.members, &memo);
      EXPECT_EQ(digest, MembersDigest::of(from.members));
      ASSERT_TRUE(apply_view_delta(held, digest, delta, &memo)) << "capacity " << capacity;
      EXPECT_EQ(held, to);
      EXPECT_EQ(digest, MembersDigest::of(to.members));
    }
    if (capacity == 64) {
      EXPECT_GE(memo.hits(), 12u) << "the second and third clients hash nothing";
    }
  }
  // Another list with the memo full of the first one's entries: still refused.
  MemberLanesMemo memo;
  View other = view_of(4, {member(1), member(2), member(7)});
  MembersDigest digest = MembersDigest::of(other.members, &memo);
  (void)MembersDigest::of(from.members, &memo);
  EXPECT_FALSE(apply_view_delta(other, digest, delta, &memo));
}

// The simulator's clients share a memo of verified signatures: once the genuine delta is in it,
// another key, another run or a flipped bit must still be refused.
TEST(ViewDelta, ASignatureMemoRefusesWhatVerificationRefuses) {
  const View from = view_of(4, {member(1), member(2)});
  const View to = view_of(5, {member(1), member(3)});
  const ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  const auto tracker = key(200);
  const auto body = encode_signed_view_delta(delta, tracker, "run-v");
  secure::SignatureMemo memo;
  EXPECT_EQ(open_signed_view_delta(body, tracker.public_key(), "run-v", &memo), delta);
  EXPECT_EQ(open_signed_view_delta(body, tracker.public_key(), "run-v", &memo), delta);
  EXPECT_EQ(memo.hits(), 1u);
  EXPECT_THROW(open_signed_view_delta(body, key(66).public_key(), "run-v", &memo), Error);
  EXPECT_THROW(open_signed_view_delta(body, tracker.public_key(), "run-w", &memo), Error);
  auto flipped = body;
  flipped[10] ^= std::byte{1};
  EXPECT_THROW(open_signed_view_delta(flipped, tracker.public_key(), "run-v", &memo), Error);
  EXPECT_THROW(open_signed_view(body, tracker.public_key(), "run-v", &memo), Error);
}

TEST(ViewDelta, TheSignedDeltaRoundTripsAndAForgedOrMalformedOneIsRefused) {
  const View from = view_of(4, {member(1), member(2)});
  const View to = view_of(5, {member(1), member(3)});
  ViewDelta delta = view_delta(from, to, MembersDigest::of(to.members));
  delta.removed_from_round = 9;  // gossip mode's stamp on the removal
  const auto tracker = key(200);
  const auto body = encode_signed_view_delta(delta, tracker, "run-v");
  EXPECT_EQ(open_signed_view_delta(body, tracker.public_key(), "run-v"), delta);
  // Another key, another run, a flipped bit.
  EXPECT_THROW(open_signed_view_delta(body, key(66).public_key(), "run-v"), Error);
  EXPECT_THROW(open_signed_view_delta(body, tracker.public_key(), "run-w"), Error);
  auto flipped = body;
  flipped[10] ^= std::byte{1};
  EXPECT_THROW(open_signed_view_delta(flipped, tracker.public_key(), "run-v"), Error);
  // A full view's signature does not make a delta (and the other way round).
  EXPECT_THROW(open_signed_view(body, tracker.public_key(), "run-v"), Error);
  // Signed, but its members out of order.
  Member low = member(1), high = member(3);
  if (high.key < low.key) std::swap(low, high);
  ViewDelta unordered = delta;
  unordered.changed = {high, low};
  EXPECT_THROW(open_signed_view_delta(encode_signed_view_delta(unordered, tracker, "run-v"),
                                      tracker.public_key(), "run-v"),
               Error);
  // Truncated anywhere.
  for (std::size_t n = 0; n < body.size(); n += 7)
    EXPECT_THROW(open_signed_view_delta(std::span(body).first(n), tracker.public_key(), "run-v"),
                 Error)
        << n;
}

// Transmits queued by the core, drained.
std::vector<Transmit> drain(TrackerCore& core) {
  std::vector<Transmit> out;
  while (core.poll_event()) {
  }
  while (auto t = core.poll_transmit()) out.push_back(std::move(*t));
  return out;
}

TEST(TrackerViews, ABurstOfJoinsIsOneBroadcastOfOneFullViewAndOneDelta) {
  Harness h;
  h.start();
  h.join(1);  // the first broadcast: a full view to peer 1
  const std::uint64_t first = h.last(1, Kind::view)->view_epoch;
  // Three more join within the view interval: no view goes out yet.
  for (std::uint8_t n = 2; n <= 4; ++n)
    h.tracker->on_message(h.now, key(n).public_key(),
                          static_cast<std::uint16_t>(MessageType::join_request),
                          encode(h.join_request(n)));
  for (const Transmit& t : drain(*h.tracker)) EXPECT_NE(t.type, MessageType::view);
  // At the end of the interval: the newcomers share one full view, peer 1 gets one delta.
  h.now += h.config.view_interval;
  h.tracker->on_timer(h.now);
  const auto sent = drain(*h.tracker);
  ASSERT_EQ(sent.size(), 4u);
  const Transmit* full = nullptr;
  for (const Transmit& t : sent) {
    if (t.to == key(1).public_key()) {
      EXPECT_EQ(t.type, MessageType::view_delta);
      h.peers.at(1).client->on_message(h.now, static_cast<std::uint16_t>(t.type), *t.body);
      continue;
    }
    ASSERT_EQ(t.type, MessageType::view);
    if (full == nullptr) full = &t;
    EXPECT_EQ(t.body, full->body) << "one encoded and signed view shared by its recipients";
  }
  const View broadcast = open_signed_view(*full->body, h.tracker_key.public_key(), h.config.run_id);
  EXPECT_EQ(broadcast.members.size(), 4u);
  EXPECT_GT(broadcast.epoch, first);
  EXPECT_EQ(h.peers.at(1).client->view(), broadcast) << "the delta rebuilt the same view";
}

TEST(TrackerViews, AMemberThatCannotApplyADeltaGetsTheFullView) {
  Harness h;
  h.start();
  h.join(1);
  h.join(2);
  h.run_for(1s);
  TrackerClient& client = *h.peers.at(1).client;
  const View held = client.view();
  ASSERT_EQ(held.members.size(), 2u);
  // A delta signed by the tracker, from an epoch this peer never saw.
  const View later = view_of(held.epoch + 2, {member(1), member(2), member(9)});
  ViewDelta gap =
      view_delta(view_of(held.epoch + 1, held.members), later, MembersDigest::of(later.members));
  client.on_message(h.now, static_cast<std::uint16_t>(MessageType::view_delta),
                    encode_signed_view_delta(gap, h.tracker_key, h.config.run_id));
  EXPECT_FALSE(client.poll_event()) << "no view from a delta it cannot apply";
  const auto request = client.poll_transmit();
  ASSERT_TRUE(request);
  EXPECT_EQ(request->type, MessageType::view_request);
  EXPECT_EQ(client.view(), held);
  // The tracker answers with the full view of its last broadcast.
  h.tracker->on_message(h.now, key(1).public_key(), static_cast<std::uint16_t>(request->type),
                        request->body);
  const auto sent = drain(*h.tracker);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, MessageType::view);
  EXPECT_EQ(open_signed_view(*sent[0].body, h.tracker_key.public_key(), h.config.run_id), held);
  // A forged delta is an error, not a request.
  client.on_message(h.now, static_cast<std::uint16_t>(MessageType::view_delta),
                    encode_signed_view_delta(gap, key(66), h.config.run_id));
  const auto e = client.poll_event();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Kind::tracker_error);
}

// A member that asks for the full view again and again (a few bytes each, ~600 bytes a member
// back) gets it once per broadcast: it cannot make the tracker send without bound.
TEST(TrackerViews, AMemberAskingForTheViewAgainGetsItOncePerBroadcast) {
  Harness h;
  h.start();
  h.join(1);
  h.join(2);
  h.run_for(1s);
  const auto ask = [&](int times) {
    for (int i = 0; i < times; ++i)
      h.tracker->on_message(h.now, key(1).public_key(),
                            static_cast<std::uint16_t>(MessageType::view_request),
                            encode(ViewRequest{}));
    std::size_t views = 0;
    for (const auto& t : drain(*h.tracker))
      views += t.to == key(1).public_key() && t.type == MessageType::view;
    return views;
  };
  EXPECT_EQ(ask(100), 1u);
  EXPECT_EQ(ask(100), 0u) << "the same broadcast again";
  h.join(3);  // a membership change: the next broadcast starts a new epoch
  h.run_for(h.config.view_interval);
  EXPECT_EQ(ask(100), 1u) << "the new broadcast, once";
}

// A member out of sync that joins again and again (as fast as the message rate lets it) would make
// the tracker send one message to each member per join if each resync sent the view at once (the
// donors must hold the member in their view): it is in the last broadcast already, so the members
// get one delta per view interval however often it joins (before: one per join).
TEST(TrackerViews, AMemberJoiningAgainAndAgainCostsTheOthersOneDeltaPerViewInterval) {
  Harness h;
  h.start();
  for (std::uint8_t n = 1; n <= 3; ++n) h.join(n);
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  h.finish_round();  // a newcomer at the genesis is out of sync: it is told to fetch the state
  h.join(9);
  ASSERT_TRUE(h.last(9, Kind::resync));
  h.run_for(10s);
  std::size_t to_member = 0, resyncs = 0;
  const auto count = [&] {
    for (const Transmit& t : drain(*h.tracker)) {
      to_member += t.to == key(1).public_key() &&
                   (t.type == MessageType::view || t.type == MessageType::view_delta);
      resyncs += t.to == key(9).public_key() && t.type == MessageType::resync;
    }
  };
  for (int i = 0; i < 40; ++i) {  // 40 joins in 400 ms: within one view interval
    h.tracker->on_message(h.now, key(9).public_key(),
                          static_cast<std::uint16_t>(MessageType::join_request),
                          encode(h.join_request(9)));
    count();
    h.now += 10ms;
    h.tracker->on_timer(h.now);
    count();
  }
  EXPECT_EQ(resyncs, 40u) << "each join is answered";
  EXPECT_EQ(to_member, 1u) << "the first join's delta at once (the views were quiet), then none";
  h.now += h.config.view_interval;
  h.tracker->on_timer(h.now);
  count();
  EXPECT_EQ(to_member, 2u) << "one more delta for the other 39 joins";
}

// A broadcast is a message to every member whatever changed: with many members the broadcasts are
// spaced so that they average at most view_send_rate messages a second.
TEST(TrackerViews, WithManyMembersTheBroadcastsAreSpacedByTheSendRate) {
  Harness h;
  h.config.view_send_rate = 4;  // 10 members: a broadcast every 2.5 s at most
  h.start();
  for (std::uint8_t n = 1; n <= 8; ++n) h.join(n);
  h.run_for(10s);
  h.join(9);  // the views were quiet: this one goes out at once
  const TimePoint broadcast = h.now;
  ASSERT_TRUE(h.last(1, Kind::view));
  ASSERT_EQ(h.peers.at(1).client->view().members.size(), 9u);
  h.tracker->on_message(h.now, key(10).public_key(),
                        static_cast<std::uint16_t>(MessageType::join_request),
                        encode(h.join_request(10)));
  for (;;) {
    bool delta = false;
    for (const Transmit& t : drain(*h.tracker))
      delta = delta || (t.to == key(1).public_key() && t.type == MessageType::view_delta);
    if (delta) break;
    h.now = h.tracker->poll_timeout();
    h.tracker->on_timer(h.now);
  }
  EXPECT_EQ(h.now, broadcast + 2500ms) << "10 members at 4 messages a second";
}

}  // namespace
}  // namespace loco::proto
