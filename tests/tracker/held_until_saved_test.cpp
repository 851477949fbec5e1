// What a replica's tracker holds back until etcd has its state (tracker/held_until_saved.hpp):
// driven by a fake store whose answers come when the test gives them, after more changes and
// messages, or from within the save itself as the state file's do.

#include "tracker/held_until_saved.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace loco::tracker {
namespace {

using proto::MessageType;
using Version = HeldUntilSaved::Version;

proto::PeerKey key_of(std::uint8_t n) {
  proto::PeerKey key{};
  key.bytes[0] = n;
  return key;
}

proto::Transmit sent_to(std::uint8_t to, MessageType type = MessageType::view) {
  return {
      .to = key_of(to), .type = type, .body = std::make_shared<const std::vector<std::byte>>(1)};
}

proto::TrackerSnapshot snapshot_at(std::uint64_t round) {
  proto::TrackerSnapshot s;
  s.run_id = "run";
  s.committed_round = round;
  return s;
}

// A store that answers only when the test says so (or at once, when `at_once` is set).
struct FakeStore {
  struct Started {
    Version version;
    std::uint64_t round;  // of the state it was given
  };
  std::vector<Started> started;
  std::vector<std::uint8_t> sent;  // the recipients of what was released, in order
  bool at_once = false;
  HeldUntilSaved held{[this](Version version, proto::TrackerSnapshot state) {
                        started.push_back({version, state.committed_round});
                        if (at_once) held.finished(version, true);
                      },
                      [this](proto::Transmit transmit) { sent.push_back(transmit.to.bytes[0]); }};
};

using Sent = std::vector<std::uint8_t>;

TEST(HeldUntilSaved, WhatFollowsAChangeWaitsForItsSaveAndLeavesInOrder) {
  FakeStore store;
  store.held.send(sent_to(1));  // nothing unsaved: out at once
  EXPECT_EQ(store.sent, Sent{1});
  store.held.changed(snapshot_at(5));
  ASSERT_EQ(store.started.size(), 1u);
  EXPECT_EQ(store.started[0].version, 1u);
  store.held.send(sent_to(2));
  store.held.send(sent_to(3, MessageType::heartbeat_ack));  // a reply waits too: it may say round 5
  EXPECT_EQ(store.sent, Sent{1});
  EXPECT_EQ(store.held.waiting(), 2u);
  store.held.finished(1, true);
  EXPECT_EQ(store.sent, (Sent{1, 2, 3}));
  EXPECT_EQ(store.held.waiting(), 0u);
  store.held.send(sent_to(4));
  EXPECT_EQ(store.sent, (Sent{1, 2, 3, 4}));
  EXPECT_EQ(store.started.size(), 1u);
}

TEST(HeldUntilSaved, ChangesDuringASaveAreSavedOnceAsTheNewestAndReleasedOnlyByIt) {
  FakeStore store;
  store.held.changed(snapshot_at(1));
  store.held.send(sent_to(1));
  store.held.changed(snapshot_at(2));  // the save of 1 is under way: 2 is next
  store.held.send(sent_to(2));
  store.held.changed(snapshot_at(3));  // replaces 2, which is never saved on its own
  store.held.send(sent_to(3));
  ASSERT_EQ(store.started.size(), 1u);
  store.held.finished(1, true);  // releases what waited for 1 only, and starts the next save
  EXPECT_EQ(store.sent, Sent{1});
  ASSERT_EQ(store.started.size(), 2u);
  EXPECT_EQ(store.started[1].version, 3u);
  EXPECT_EQ(store.started[1].round, 3u) << "the newest state covers the one it replaced";
  store.held.send(sent_to(4));  // after 3: waits for 3 too
  EXPECT_EQ(store.sent, Sent{1});
  store.held.finished(3, true);
  EXPECT_EQ(store.sent, (Sent{1, 2, 3, 4}));
  EXPECT_EQ(store.held.saved_version(), 3u);
  EXPECT_EQ(store.started.size(), 2u);
}

TEST(HeldUntilSaved, AFailedSaveDropsWhatWaitsAndTheNextSaveAndSendsNothingMore) {
  FakeStore store;
  store.held.changed(snapshot_at(1));
  store.held.send(sent_to(1));
  store.held.changed(snapshot_at(2));
  store.held.send(sent_to(2));
  store.held.finished(1, true);
  EXPECT_EQ(store.sent, Sent{1});
  store.held.changed(snapshot_at(3));  // next, behind the save of 2
  store.held.send(sent_to(3));
  store.held.finished(2, false);  // refused (deposed) or unanswered: 2 may not be in etcd
  EXPECT_TRUE(store.held.failed());
  EXPECT_EQ(store.held.waiting(), 0u);
  EXPECT_EQ(store.started.size(), 2u) << "3 is never saved";
  store.held.send(sent_to(4));
  store.held.changed(snapshot_at(4));
  EXPECT_EQ(store.sent, Sent{1}) << "a failed replica announces nothing more";
  EXPECT_EQ(store.started.size(), 2u);
}

TEST(HeldUntilSaved, AStoreThatAnswersWithinTheSaveHoldsNothing) {
  FakeStore store;  // the state file: written on the spot
  store.at_once = true;
  store.held.send(sent_to(1));
  store.held.changed(snapshot_at(1));
  store.held.send(sent_to(2));
  store.held.changed(snapshot_at(2));
  store.held.send(sent_to(3));
  EXPECT_EQ(store.sent, (Sent{1, 2, 3}));
  ASSERT_EQ(store.started.size(), 2u);
  EXPECT_EQ(store.started[1].version, 2u);
  EXPECT_EQ(store.held.waiting(), 0u);
}

TEST(HeldUntilSaved, APeerCutOffLosesWhatWaitsForItButItsReplies) {
  FakeStore store;
  store.held.changed(snapshot_at(1));
  store.held.send(sent_to(1));
  store.held.send(sent_to(2));
  store.held.send(sent_to(1, MessageType::join_reply));
  EXPECT_TRUE(store.held.holds(key_of(1)));
  store.held.drop(key_of(1));
  EXPECT_TRUE(store.held.holds(key_of(1))) << "its reply (why it was refused) stays";
  store.held.drop(key_of(2));
  EXPECT_FALSE(store.held.holds(key_of(2)));
  store.held.finished(1, true);
  EXPECT_EQ(store.sent, Sent{1});
  EXPECT_FALSE(store.held.holds(key_of(1)));
}

}  // namespace
}  // namespace loco::tracker
