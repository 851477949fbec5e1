// Where loco-tracker keeps its state: the state file (the default), and a replica's keys in etcd,
// written only while its election says it leads (a real one-member etcd,
// tests/support/etcd_cluster.hpp), with the commit log written by the same saves.

#include "tracker/state_store.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/etcd_cluster.hpp"
#include "../support/largest_snapshot.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/etcd/etcd_client.hpp"
#include "loco/replica/commit_log.hpp"
#include "tracker/etcd_state.hpp"

namespace loco::tracker {
namespace {

Digest hash_of(std::uint64_t round) {
  Digest d{};
  d[0] = static_cast<std::uint8_t>(round);
  d[31] = 0xab;
  return d;
}

// A run's state at `round`, each round since 1 in its history (as TrackerCore saves it).
proto::TrackerSnapshot saved_state_at(std::uint64_t round) {
  proto::TrackerSnapshot s;
  s.run_id = "run";
  s.epoch = 3;
  s.committed_round = round;
  s.committed_hash = hash_of(round);
  for (std::uint64_t r = 1; r <= round; ++r)
    s.history.push_back({.round = r,
                         .unix_ms = 1000 + r,
                         .group_size = 4,
                         .mean_loss = 2.5f,
                         .state_hash = hash_of(r)});
  s.members.resize(2);
  s.members[1].bytes[0] = 1;
  return s;
}

TEST(StateFile, ANewRunHasNoneAndASavedStateComesBack) {
  test::TempDir dir;
  StateFile file(dir / "tracker.state");
  EXPECT_FALSE(file.load());
  ASSERT_TRUE(file.save(saved_state_at(7)));
  EXPECT_EQ(file.load(), saved_state_at(7));
  std::ofstream(dir / "huge.state") << std::string(kMaxStateBytes + 1, 'x');
  EXPECT_THROW(StateFile(dir / "huge.state").load(), Error);  // refused before it is read
  std::ofstream(dir / "damaged.state") << "loco-tracker-state, and then nothing of one";
  EXPECT_THROW(StateFile(dir / "damaged.state").load(), Error);
}

// A state that grew as far as it can (thousands of keys held against) is saved and read back:
// a tracker whose state outgrew what it reads would not start again.
TEST(StateFile, TheLargestStateComesBack) {
  test::TempDir dir;
  StateFile file(dir / "tracker.state");
  const proto::TrackerSnapshot largest = test::largest_snapshot();
  ASSERT_TRUE(file.save(largest));
  EXPECT_EQ(std::filesystem::file_size(dir / "tracker.state"), kMaxStateBytes);
  EXPECT_EQ(file.load(), largest);
}

// The commit log as etcd holds it: each entry with the version of its key.
std::vector<std::pair<replica::CommitLogEntry, std::int64_t>> commit_log(replica::KvStore& store) {
  const std::string prefix = replica::commit_log_prefix("/loco/run/");
  std::vector<std::pair<replica::CommitLogEntry, std::int64_t>> log;
  for (const replica::KeyValue& kv :
       store.range({prefix, replica::prefix_end(prefix), 0, false}).kvs) {
    log.emplace_back(replica::decode_commit_entry(kv.value), kv.version);
    EXPECT_EQ(kv.key, replica::commit_log_key("/loco/run/", log.back().first.round));
  }
  return log;
}

// The rounds of the log, and whether each key was written once.
std::vector<std::uint64_t> rounds_of(replica::KvStore& store, bool& each_once) {
  std::vector<std::uint64_t> rounds;
  each_once = true;
  for (const auto& [entry, version] : commit_log(store)) {
    rounds.push_back(entry.round);
    each_once = each_once && version == 1;
  }
  return rounds;
}

TEST(EtcdState, OnlyTheLeaderSavesAndLogsAndTheNextLeaderLoadsWhatItSaved) {
  test::EtcdCluster cluster(1);
  const std::string prefix = "/loco/run/";
  etcd::EtcdClient a_client(cluster.client_options()), b_client(cluster.client_options());
  replica::Election a(a_client, prefix + "leader/", "tracker-a"),
      b(b_client, prefix + "leader/", "tracker-b");
  const replica::LeaseId a_lease = a_client.lease_grant(5).id;
  a.campaign(a_lease);
  b.campaign(b_client.lease_grant(5).id);
  ASSERT_EQ(a.poll(), replica::Election::Standing::leading);
  EtcdState a_state(a_client, a, prefix), b_state(b_client, b, prefix);
  EXPECT_FALSE(a_state.load());
  ASSERT_TRUE(a_state.save(saved_state_at(1)));
  ASSERT_TRUE(a_state.save(saved_state_at(1)));  // a change of members, say: nothing more to log
  ASSERT_TRUE(a_state.save(saved_state_at(2)));

  // a is deposed (its lease revoked, as when it expires): b leads and finds round 2.
  a_client.lease_revoke(a_lease);
  ASSERT_EQ(b.poll(), replica::Election::Standing::leading);
  EXPECT_EQ(b_state.load(), saved_state_at(2));
  EXPECT_FALSE(a_state.save(saved_state_at(3)));  // refused: neither state nor log written
  bool once = false;
  EXPECT_EQ(rounds_of(b_client, once), (std::vector<std::uint64_t>{1, 2}));
  ASSERT_TRUE(b_state.save(saved_state_at(3)));
  EXPECT_EQ(b_state.load(), saved_state_at(3));
  EXPECT_EQ(rounds_of(b_client, once), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_TRUE(once);
  const replica::CommitLogEntry third = commit_log(b_client).back().first;
  EXPECT_EQ(third.state_hash, hash_of(3));
  EXPECT_EQ(third.group_size, 4u);
  EXPECT_EQ(third.epoch, 3u);
  EXPECT_EQ(third.members, 2u);
  EXPECT_EQ(third.unix_ms, 1003u);

  // Round 3 lost (the run went back to 2), then committed again: its entry is written over.
  proto::TrackerSnapshot back = saved_state_at(2);
  back.lost_rounds.push_back({.first = 3, .last = 3, .went_back_to = 2, .unix_ms = 5});
  ASSERT_TRUE(b_state.save(back));
  proto::TrackerSnapshot again = saved_state_at(3);
  again.history.back().state_hash = again.committed_hash = hash_of(33);
  ASSERT_TRUE(b_state.save(again));
  EXPECT_EQ(rounds_of(b_client, once), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_FALSE(once);
  const auto [entry, version] = commit_log(b_client).back();
  EXPECT_EQ(entry.state_hash, hash_of(33));
  EXPECT_EQ(version, 2);  // written twice: its round was lost in between
}

// etcd set up as docs/TRACKER.md says takes the largest state in one fenced save; one left at
// its default request cap (1.5 MiB) refuses it, and the error names the flag to set.
TEST(EtcdState, TheLargestStateIsSavedWholeAndAnEtcdTooSmallForItIsNamed) {
  const std::string prefix = "/loco/run/";
  const proto::TrackerSnapshot largest = test::largest_snapshot();
  // The round before it saved first (a save logs the rounds it commits, and etcd takes at most
  // 128 keys in one transaction: a run commits them one at a time).
  proto::TrackerSnapshot before = saved_state_at(1);
  before.committed_round = largest.committed_round - 1;
  for (const std::size_t request_bytes : {replica::kStoreRequestBytes, std::size_t{0}}) {
    test::EtcdCluster cluster(1, request_bytes);
    etcd::EtcdClient client(cluster.client_options());
    replica::Election election(client, prefix + "leader/", "tracker-a");
    election.campaign(client.lease_grant(5).id);
    ASSERT_EQ(election.poll(), replica::Election::Standing::leading);
    replica::FencedState state(client, election, prefix);
    ASSERT_EQ(state.save(before), replica::FencedState::Saved::saved);
    if (request_bytes != 0) {
      ASSERT_EQ(state.save(largest), replica::FencedState::Saved::saved) << state.error();
      EXPECT_EQ(state.load(), largest);
    } else {
      EXPECT_EQ(state.save(largest), replica::FencedState::Saved::unanswered);
      EXPECT_NE(state.error().find("--max-request-bytes=10485760"), std::string::npos)
          << state.error();
      EXPECT_EQ(state.load(), before);  // nothing of it written
    }
  }
}

}  // namespace
}  // namespace loco::tracker
