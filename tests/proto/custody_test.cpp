// Checkpoint custody: the schedule, the pruning and the choice of state as pure functions; the
// relay and custody-file codecs against damage; a pull paced by its budget; and the tracker core
// pulling a copy from one member and serving it when no live member holds the run's state, each
// with exact outcomes on a virtual clock.

#include <gtest/gtest.h>

#include "custody_run.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/custody_file.hpp"
#include "loco/proto/custody_policy.hpp"
#include "loco/proto/custody_pull.hpp"
#include "loco/proto/state_relay.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace std::chrono_literals;
using testing::CustodyRun;
using testing::digest_of;
using testing::Harness;
using testing::key;
using Kind = ClientEvent::Kind;

using testing::random_state;

CustodyEntry entry(std::uint64_t round, std::uint64_t bytes) {
  return CustodyEntry{.round = round, .state_hash = digest_of(round), .bytes = bytes};
}

std::vector<std::uint64_t> rounds_of(const std::vector<CustodyEntry>& entries) {
  std::vector<std::uint64_t> out;
  for (const auto& e : entries) out.push_back(e.round);
  return out;
}

// --- schedule, pruning, choice ---

TEST(CustodyPolicy, CopiesAreDueAtEachMultipleOfEveryRound) {
  EXPECT_EQ(next_custody_round(std::nullopt, 10), 10u);
  EXPECT_EQ(next_custody_round(10, 10), 20u);
  EXPECT_EQ(next_custody_round(11, 10), 20u) << "a pull that slipped keeps the schedule";
  EXPECT_EQ(next_custody_round(19, 10), 20u);
  EXPECT_EQ(next_custody_round(3, 1), 4u);
  EXPECT_FALSE(custody_due(0, std::nullopt, 1)) << "the genesis state needs no copy";
  EXPECT_FALSE(custody_due(9, std::nullopt, 10));
  EXPECT_TRUE(custody_due(10, std::nullopt, 10));
  EXPECT_TRUE(custody_due(12, std::nullopt, 10));
  EXPECT_FALSE(custody_due(19, 12, 10));
  EXPECT_TRUE(custody_due(20, 12, 10));
  EXPECT_FALSE(custody_due(20, 20, 10));
  EXPECT_FALSE(custody_due(100, std::nullopt, 0)) << "every 0: custody off";
  // The run's final round is copied whatever `every` says, once.
  EXPECT_FALSE(custody_due(59, 50, 10, 60));
  EXPECT_TRUE(custody_due(60, 50, 10, 60));
  EXPECT_TRUE(custody_due(7, std::nullopt, 10, 7));
  EXPECT_FALSE(custody_due(60, 60, 10, 60));
  EXPECT_FALSE(custody_due(60, 50, 0, 60)) << "every 0: custody off, the final round too";
}

TEST(CustodyPolicy, PruningKeepsTheNewestWithinTheCountAndTheDiskBudget) {
  EXPECT_TRUE(custody_to_prune({}, 3, 100).empty());
  // Unordered input; the newest 3 kept.
  EXPECT_EQ(
      rounds_of(custody_to_prune(
          {entry(20, 10), entry(10, 10), entry(40, 10), entry(30, 10), entry(50, 10)}, 3, 1000)),
      (std::vector<std::uint64_t>{10, 20}));
  // The budget holds two copies of 40 bytes: the third newest goes too.
  EXPECT_EQ(rounds_of(custody_to_prune({entry(10, 40), entry(20, 40), entry(30, 40)}, 3, 100)),
            (std::vector<std::uint64_t>{10}));
  // Once a copy does not fit, no older one is kept, even a smaller one.
  EXPECT_EQ(rounds_of(custody_to_prune({entry(10, 1), entry(20, 90), entry(30, 20)}, 3, 100)),
            (std::vector<std::uint64_t>{10, 20}));
  // The newest is kept even alone above the budget.
  EXPECT_EQ(rounds_of(custody_to_prune({entry(10, 10), entry(20, 500)}, 3, 100)),
            (std::vector<std::uint64_t>{10}));
  EXPECT_EQ(rounds_of(custody_to_prune({entry(10, 10), entry(20, 10)}, 1, 100)),
            (std::vector<std::uint64_t>{10}));
}

TEST(CustodyPolicy, TheRunGoesOnFromTheNewestStateAvailable) {
  const std::vector<HeldState> held = {{.round = 0, .hash = digest_of(0), .holders = 3},
                                       {.round = 4, .hash = digest_of(7), .holders = 1},
                                       {.round = 4, .hash = digest_of(5), .holders = 2}};
  // The members' newest, the one most of them hold.
  EXPECT_EQ(settle_state(held, std::nullopt),
            (StateSource{.round = 4, .hash = digest_of(5), .custody = false}));
  EXPECT_EQ(settle_state(held, entry(3, 10)),
            (StateSource{.round = 4, .hash = digest_of(5), .custody = false}));
  // A custody copy as new or newer wins.
  EXPECT_EQ(settle_state(held, entry(4, 10)),
            (StateSource{.round = 4, .hash = digest_of(4), .custody = true}));
  EXPECT_EQ(settle_state(held, entry(9, 10)),
            (StateSource{.round = 9, .hash = digest_of(9), .custody = true}));
  // Equal holders: the smaller hash, whatever the order.
  const std::vector<HeldState> tie = {{.round = 2, .hash = digest_of(8), .holders = 1},
                                      {.round = 2, .hash = digest_of(6), .holders = 1}};
  EXPECT_EQ(settle_state(tie, std::nullopt).hash, digest_of(6));
}

// --- codecs ---

TEST(StateRelay, RoundTripsAndRefusesDamage) {
  const auto inner = encode_chunk_request(7, 3);
  const auto body = encode_relay(MessageType::state_to_tracker, MessageType::chunk_request, inner);
  const StateRelay r = decode_relay(MessageType::state_to_tracker, body);
  EXPECT_EQ(r.inner, MessageType::chunk_request);
  EXPECT_TRUE(std::equal(r.body.begin(), r.body.end(), inner.begin(), inner.end()));
  for (std::size_t n = 0; n < 3; ++n)
    EXPECT_THROW(decode_relay(MessageType::state_to_tracker, std::span(body).first(n)), Error);
  auto version = body;
  version[0] = std::byte{9};
  EXPECT_THROW(decode_relay(MessageType::state_to_tracker, version), Error);
  // Any type but the five state-transfer ones is refused, e.g. a ring chunk or a commit.
  for (const std::uint16_t type : {0x0201, 0x0185, 0x7777}) {
    auto other = body;
    other[1] = static_cast<std::byte>(type & 0xff);
    other[2] = static_cast<std::byte>(type >> 8);
    try {
      decode_relay(MessageType::state_to_tracker, other);
      ADD_FAILURE() << "type " << type << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a state-transfer message"), std::string::npos);
    }
  }
  // The inner body within its own type's limit (a chunk request is 1 KiB at most).
  std::vector<std::byte> big(3 + 2048);
  std::copy(body.begin(), body.begin() + 3, big.begin());
  EXPECT_THROW(decode_relay(MessageType::state_to_tracker, big), Error);
  // And the whole within the relay's.
  std::vector<std::byte> huge(info(MessageType::state_to_tracker).max_bytes + 1);
  std::copy(body.begin(), body.begin() + 3, huge.begin());
  EXPECT_THROW(decode_relay(MessageType::state_to_tracker, huge), Error);
}

TEST(CustodyFile, RoundTripsAndRefusesADamagedOrOversizedFile) {
  const auto state = random_state(2500, 3);
  const StateManifest manifest = make_manifest(6, StateBytes({std::span(state)}), 1000);
  auto file = encode_custody_header("run-c", manifest);
  const std::size_t header = file.size();
  file.insert(file.end(), state.begin(), state.end());
  const CustodyFile f = decode_custody_file(file, "f", 1 << 20);
  EXPECT_EQ(f.run_id, "run-c");
  EXPECT_EQ(f.manifest, manifest);
  EXPECT_EQ(f.state, state);
  for (const std::size_t n : {std::size_t{0}, std::size_t{5}, header - 1, header, file.size() - 1})
    EXPECT_THROW(decode_custody_file(std::span(file).first(n), "f", 1 << 20), Error) << n;
  auto flipped = file;
  flipped[header + 1700] ^= std::byte{1};
  try {
    decode_custody_file(flipped, "f", 1 << 20);
    ADD_FAILURE() << "a flipped byte passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk 1 does not match"), std::string::npos);
  }
  EXPECT_THROW(decode_custody_file(file, "f", 2499), Error) << "above the custody limit";
  auto trailing = file;
  trailing.push_back(std::byte{0});
  EXPECT_THROW(decode_custody_file(trailing, "f", 1 << 20), Error);
}

// --- the pull ---

struct PullRig {
  std::vector<std::byte> state = random_state(4000, 4);
  StateManifest manifest = make_manifest(5, StateBytes({std::span(state)}), 1000);
  PeerKey donor = key(1).public_key();
  StateServer server;
  TimePoint now{};
  std::unique_ptr<CustodyPull> pull;
  std::vector<std::pair<TimePoint, std::uint64_t>> chunk_requests;  // when, which

  explicit PullRig(std::uint64_t bytes_per_s, std::uint64_t max_state = 1 << 20) {
    server.serve(manifest, StateBytes({std::span(state)}));
    pull = std::make_unique<CustodyPull>(CustodyPullConfig{.round = 5,
                                                           .state_hash = manifest.state_hash(),
                                                           .donor = donor,
                                                           .max_state_bytes = max_state,
                                                           .bytes_per_s = bytes_per_s},
                                         now);
  }
  // Delivers everything both ways at `now`; `corrupt` flips a byte of every chunk.
  void pump(bool corrupt = false) {
    for (bool moved = true; moved;) {
      moved = false;
      while (auto t = pull->poll_transmit()) {
        moved = true;
        if (t->type == MessageType::chunk_request) {
          ByteReader r(t->body, "chunk request");
          r.u8();
          r.u64();
          chunk_requests.emplace_back(now, r.u64());
        }
        server.on_message(key(200).public_key(), t->type, t->body);  // from the tracker
      }
      while (auto t = server.poll_transmit()) {
        moved = true;
        if (corrupt && t->type == MessageType::state_chunk) t->body.back() ^= std::byte{1};
        pull->on_message(now, donor, t->type, t->body);
      }
    }
  }
};

TEST(CustodyPull, ChunkRequestsArePacedByTheBandwidthBudget) {
  PullRig rig(1000);  // one 1000-byte chunk a second
  rig.pump();
  while (!rig.pull->done()) {
    const TimePoint next = rig.pull->poll_timeout();
    ASSERT_NE(next, kNever);
    rig.now = next;
    rig.pull->on_timer(rig.now);
    rig.pump();
  }
  ASSERT_EQ(rig.chunk_requests.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rig.chunk_requests[i].first, TimePoint{} + std::chrono::seconds(i));
    EXPECT_EQ(rig.chunk_requests[i].second, i);
  }
  EXPECT_EQ(rig.pull->manifest(), rig.manifest);
  EXPECT_TRUE(std::equal(rig.pull->state().begin(), rig.pull->state().end(), rig.state.begin(),
                         rig.state.end()));
}

TEST(CustodyPull, UnpacedItTakesNoTimeAndABadDonorIsNamed) {
  PullRig rig(0);
  rig.pump();
  EXPECT_TRUE(rig.pull->done());
  EXPECT_EQ(rig.now, TimePoint{});
  PullRig bad(0);
  bad.pump(/*corrupt=*/true);
  EXPECT_FALSE(bad.pull->done());
  ASSERT_TRUE(bad.pull->failure());
  EXPECT_TRUE(bad.pull->donor_was_bad());
}

TEST(CustodyPull, AStateAboveTheLimitIsNotPulled) {
  PullRig rig(0, 3999);
  rig.pump();
  EXPECT_EQ(rig.pull->too_large(), 4000u);
  ASSERT_TRUE(rig.pull->failure());
  EXPECT_NE(rig.pull->failure()->find("above the custody limit of 3999"), std::string::npos);
  EXPECT_TRUE(rig.chunk_requests.empty()) << "nothing allocated nor asked for";
}

// --- the tracker core ---

TEST(TrackerCustody, EveryKRoundsOneMemberThatHoldsTheStateIsPulledFrom) {
  CustodyRun run(2);
  run.h.join(1);
  run.h.join(2);
  run.round({1, 2});
  run.h.run_for(1s);
  EXPECT_EQ(run.serve(1, 1) + run.serve(2, 1), 0u) << "round 1 is not due";
  run.round({1, 2});
  // Round 2 is due; the holders install it before they serve it.
  run.h.run_for(200ms - 1ns);
  EXPECT_EQ(run.serve(1, 2) + run.serve(2, 2), 0u);
  run.h.run_for(1ns);
  // One member asked (the first by key among the least loaded), the other not.
  EXPECT_EQ(run.serve(run.hi, 2), 0u);
  EXPECT_EQ(run.serve(run.lo, 2), 1u + 3u) << "a manifest request and three chunk requests";
  const auto copy = run.h.tracker->poll_custody();
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->manifest, run.manifest(2));
  EXPECT_EQ(copy->state, run.state);
  EXPECT_FALSE(run.h.tracker->poll_custody());
  // Until the driver has stored it nothing is served, and round 3 is not due.
  run.h.tracker->set_custody(copy->manifest,
                             std::make_shared<const std::vector<std::byte>>(copy->state));
  EXPECT_EQ(run.h.tracker->custody(),
            (CustodyEntry{.round = 2, .state_hash = run.manifest(2).state_hash(), .bytes = 3000}));
  run.round({1, 2});
  run.h.run_for(1s);
  EXPECT_EQ(run.serve(1, 3) + run.serve(2, 3), 0u);
  // Round 4: the other is the least loaded now.
  run.round({1, 2});
  run.h.run_for(200ms);
  EXPECT_EQ(run.serve(run.lo, 4), 0u);
  EXPECT_EQ(run.serve(run.hi, 4), 4u);
  EXPECT_EQ(run.h.tracker->poll_custody()->manifest.round, 4u);
}

TEST(TrackerCustody, ADonorThatRefusesIsLeftAndTheOtherAskedThenAllAgainWithBackoff) {
  CustodyRun run(1);
  run.h.join(1);
  run.h.join(2);
  run.round({1, 2});
  run.h.run_for(200ms);
  // Both still serve round 0 (the commit has not reached their state servers yet).
  EXPECT_EQ(run.serve(run.lo, 0), 1u);
  EXPECT_EQ(run.serve(run.hi, 0), 1u) << "the second member is asked at once";
  EXPECT_EQ(run.serve(run.lo, 0) + run.serve(run.hi, 0), 0u) << "then nothing until the retry";
  // Retries after 200 ms, doubling up to a second: 200, 400, 800, 1000, 1000 ms.
  for (const Duration wait : {200ms, 400ms, 800ms, 1000ms, 1000ms}) {
    EXPECT_EQ(run.h.tracker->poll_timeout(), run.h.now + wait);
    run.h.run_for(wait);
    EXPECT_EQ(run.serve(run.lo, 0), 1u);
    EXPECT_EQ(run.serve(run.hi, 0), 1u);
  }
  EXPECT_EQ(run.h.tracker->poll_timeout(), run.h.now + 1s);
  run.h.run_for(1s);
  EXPECT_EQ(run.serve(run.lo, 1), 4u) << "asked again after exactly the retry delay";
  EXPECT_TRUE(run.h.tracker->poll_custody());
}

TEST(TrackerCustody, WithNoLivePeerHoldingTheStateTheTrackerServesItsCopy) {
  CustodyRun run(1);
  run.h.join(1);
  run.round({1});
  run.h.run_for(200ms);
  run.serve(1, 1);
  auto copy = run.h.tracker->poll_custody();
  ASSERT_TRUE(copy);
  run.h.tracker->set_custody(copy->manifest,
                             std::make_shared<const std::vector<std::byte>>(copy->state));
  run.h.disconnect(1);
  // A newcomer with the genesis state is told to fetch round 1 from the tracker.
  run.h.join(3);
  const auto r = run.h.last(3, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 1u);
  EXPECT_EQ(r->resync.state_hash, run.manifest(1).state_hash());
  ASSERT_EQ(r->resync.donors.size(), 1u);
  EXPECT_EQ(r->resync.donors[0].key, run.h.tracker_key.public_key());
  // It fetches it over its tracker link, every chunk checked.
  StateFetcher fetcher(
      FetchConfig{
          .round = 1, .state_hash = r->resync.state_hash, .donors = {r->resync.donors[0].key}},
      run.h.now);
  std::size_t seen = run.h.peers.at(3).events.size();
  for (bool moved = true; moved && !fetcher.done();) {
    moved = false;
    while (auto t = fetcher.poll_transmit()) {
      run.h.peers.at(3).client->relay(t->type, t->body);
      moved = true;
    }
    run.h.pump();
    for (; seen < run.h.peers.at(3).events.size(); ++seen) {
      const ClientEvent e = run.h.peers.at(3).events[seen];
      if (e.kind == Kind::state_relay)
        fetcher.on_message(run.h.now, run.h.tracker_key.public_key(), e.relay_type, e.relay_body);
    }
  }
  ASSERT_TRUE(fetcher.done());
  EXPECT_TRUE(std::equal(fetcher.state().begin(), fetcher.state().end(), run.state.begin(),
                         run.state.end()));
  // Back in sync, it joins round 2: the run goes on from the tracker's copy.
  run.h.peers.at(3).client->set_state(1, r->resync.state_hash);
  run.h.peers.at(3).client->state_report();
  run.h.pump();
  run.round({3});
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 2u);
}

// Members that claim the state and hand over wrong bytes (or none) cannot keep it from a newcomer
// (loco-peer fetch-model, issue 44): its first resync names the members that hold the state, not
// the tracker; once its fetch failed and it asks again (it reports the state it still holds), the
// tracker's copy is named beside them.
TEST(TrackerCustody, ANewcomerWhoseFetchFailedIsNamedTheCopyBesideTheHolders) {
  CustodyRun run(1);
  run.h.join(1);
  run.round({1});
  run.h.run_for(200ms);
  run.serve(1, 1);
  ASSERT_EQ(run.store_copy(), 1u);
  run.h.join(3);
  ASSERT_EQ(run.h.count(3, Kind::resync), 1u);
  const auto first = run.h.last(3, Kind::resync);
  ASSERT_EQ(first->resync.donors.size(), 1u);
  EXPECT_EQ(first->resync.donors[0].key, key(1).public_key()) << "the member, not the tracker";

  run.h.peers.at(3).client->state_report();  // the genesis still: its fetch failed
  run.h.pump();
  ASSERT_EQ(run.h.count(3, Kind::resync), 2u);
  const auto again = run.h.last(3, Kind::resync);
  EXPECT_EQ(again->resync.round, 1u);
  ASSERT_EQ(again->resync.donors.size(), 2u);
  EXPECT_EQ(again->resync.donors[0].key, key(1).public_key());
  EXPECT_EQ(again->resync.donors[1].key, run.h.tracker_key.public_key());
}

TEST(TrackerCustody, FromAnOlderCopyTheRunGoesOnFromTheCopysRound) {
  CustodyRun run(2);
  run.h.join(1);
  run.round({1});
  run.round({1});
  run.h.run_for(200ms);
  run.serve(1, 2);
  auto copy = run.h.tracker->poll_custody();
  ASSERT_TRUE(copy);
  run.h.tracker->set_custody(copy->manifest,
                             std::make_shared<const std::vector<std::byte>>(copy->state));
  run.round({1});  // round 3: not due, no copy
  run.h.disconnect(1);
  run.h.join(3);
  // Nobody holds round 3: the last holder is given the eviction timeout to come back.
  const auto first = run.h.last(3, Kind::resync);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->resync.round, 3u);
  EXPECT_TRUE(first->resync.donors.empty());
  run.h.run_for(10s - 1ms);
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 3u);
  run.h.run_for(1ms);
  const auto r = run.h.last(3, Kind::resync);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->resync.round, 2u);
  ASSERT_EQ(r->resync.donors.size(), 1u);
  EXPECT_EQ(r->resync.donors[0].key, run.h.tracker_key.public_key());
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 2u) << "round 3 is done again";
  bool said = false;
  for (const auto& e : run.h.tracker_events_of(TrackerEvent::Kind::notice))
    said |= e.text.find("goes on from round 2") != std::string::npos &&
            e.text.find("custody copy") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(TrackerCustody, AStrayRelayIsIgnoredAndAMalformedOneCutsOffItsSenderOnly) {
  CustodyRun run(0);
  run.h.join(1);
  run.h.join(2);
  // An answer to no pull: dropped, nobody blamed.
  run.h.tracker->on_message(run.h.now, key(1).public_key(),
                            static_cast<std::uint16_t>(MessageType::state_to_tracker),
                            encode_relay(MessageType::state_to_tracker, MessageType::state_refusal,
                                         std::vector<std::byte>(9, std::byte{1})));
  run.h.pump();
  EXPECT_TRUE(run.h.tracker_events_of(TrackerEvent::Kind::misbehaved).empty());
  // A request without a copy held: refused with a reason, over the same link.
  run.h.peers.at(1).client->relay(MessageType::state_request,
                                  encode_state_request(1, digest_of(1)));
  run.h.pump();
  const auto refusal = run.h.last(1, Kind::state_relay);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->relay_type, MessageType::state_refusal);
  // A relay carrying a commit: that peer is cut off, the other stays.
  std::vector<std::byte> bad = {std::byte{1}, std::byte{0x85}, std::byte{0x01}, std::byte{1}};
  run.h.tracker->on_message(run.h.now, key(1).public_key(),
                            static_cast<std::uint16_t>(MessageType::state_to_tracker), bad);
  run.h.pump();
  const auto misbehaved = run.h.tracker_events_of(TrackerEvent::Kind::misbehaved);
  ASSERT_EQ(misbehaved.size(), 1u);
  EXPECT_NE(misbehaved[0].text.find("not a state-transfer message"), std::string::npos)
      << misbehaved[0].text;
  EXPECT_EQ(run.h.tracker->status(run.h.now).members.size(), 1u);
}

TEST(TrackerCustody, WithoutACopyTheRunGoesOnFromWhatTheLiveMembersHold) {
  CustodyRun run(0);
  run.h.join(1);
  run.round({1});
  run.h.disconnect(1);
  run.h.join(3);
  ASSERT_TRUE(run.h.last(3, Kind::resync));
  EXPECT_EQ(run.h.last(3, Kind::resync)->resync.round, 1u) << "told to fetch what no one holds";
  run.h.run_for(10s);  // the last holder's grace (eviction timeout)
  EXPECT_EQ(run.h.tracker->snapshot().committed_round, 0u) << "its genesis state is the run's now";
  // Told so: a resync to the state it holds ends its fetch of round 1.
  const auto told = run.h.last(3, Kind::resync);
  ASSERT_TRUE(told);
  EXPECT_EQ(told->resync.round, 0u);
  EXPECT_EQ(told->resync.state_hash, run.h.tracker->snapshot().committed_hash);
  // Round 1 is lost, and said to be: the history no longer has it (it is committed again, with
  // another state), and the status names it.
  const TrackerStatus status = run.h.tracker->status(run.h.now);
  EXPECT_TRUE(status.history.empty());
  ASSERT_EQ(status.lost_rounds.size(), 1u);
  EXPECT_EQ(status.lost_rounds[0].first, 1u);
  EXPECT_EQ(status.lost_rounds[0].last, 1u);
  EXPECT_EQ(status.lost_rounds[0].went_back_to, 0u);
}

}  // namespace
}  // namespace loco::proto
