// The simulator's store (sim/store_model.hpp) held to what the real etcd does for tracker
// replicas (tests/etcd/election_test.cpp runs the same election against etcd 3.4): one revision
// for the store, create_revision fencing, leases that expire on the virtual clock and take their
// keys, ranges oldest first, and the faults a schedule gives it (down, cut, a lost answer).

#include "loco/sim/store_model.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/replica/election.hpp"

namespace loco::sim {
namespace {

using replica::Compare;
using replica::Election;
using replica::one_key;
using replica::prefix_end;
using replica::Put;
using replica::Txn;

const std::string kPrefix = "/loco/test-run/leader/";

struct World {
  EventLoop loop;
  StoreModel store{loop};
  void advance(Duration d) { ASSERT_TRUE(loop.run_until(loop.now() + d, 1'000'000)); }
};

// A write only the leader may make: commit round `round` with `hash`, once.
Txn commit_round(int round, const std::string& hash) {
  const std::string key = "/loco/test-run/commit/" + std::to_string(round);
  return {.compare = {{.key = key, .target = Compare::Target::create_revision, .value = 0}},
          .success = {Put{.key = key, .value = hash, .lease = 0}},
          .failure = {}};
}

ErrorCategory category_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.category();
  }
  return ErrorCategory::invalid_argument;  // no error
}

TEST(StoreModel, RevisionsAreEtcds) {
  World w;
  auto client = w.store.client(0);
  EXPECT_EQ(client->range(one_key("a")).revision, 1);  // an empty store is at 1
  const auto first =
      client->txn({.compare = {}, .success = {Put{"a", "1", 0}, Put{"b", "1", 0}}, .failure = {}});
  EXPECT_EQ(first.revision, 2);  // one transaction, one revision for both puts
  client->txn({.compare = {}, .success = {Put{"a", "2", 0}}, .failure = {}});
  const auto a = client->range(one_key("a"));
  ASSERT_EQ(a.kvs.size(), 1u);
  EXPECT_EQ(a.kvs[0].create_revision, 2);
  EXPECT_EQ(a.kvs[0].mod_revision, 3);
  EXPECT_EQ(a.kvs[0].version, 2);
  EXPECT_EQ(a.revision, 3);
  // Nothing changed: no new revision (a delete of nothing, a failed compare with no ops).
  client->txn({.compare = {}, .success = {replica::delete_key("zz")}, .failure = {}});
  const auto refused =
      client->txn({.compare = {{.key = "a", .target = Compare::Target::version, .value = 7}},
                   .success = {Put{"a", "3", 0}},
                   .failure = {one_key("a")}});
  EXPECT_FALSE(refused.succeeded);
  EXPECT_EQ(refused.revision, 3);
  ASSERT_EQ(refused.ranges.size(), 1u);
  EXPECT_EQ(refused.ranges[0].at(0).value, "2");
  // A compare on a missing key sees 0; a deleted and recreated key is a new key.
  client->txn({.compare = {}, .success = {replica::delete_key("a")}, .failure = {}});
  EXPECT_TRUE(
      client
          ->txn({.compare = {{.key = "a", .target = Compare::Target::mod_revision, .value = 0}},
                 .success = {Put{"a", "new", 0}},
                 .failure = {}})
          .succeeded);
  EXPECT_EQ(client->range(one_key("a")).kvs.at(0).create_revision, 5);
  EXPECT_EQ(client->range(one_key("a")).kvs.at(0).version, 1);
}

TEST(StoreModel, RangesByKeyOrOldestFirstWithALimitThatKeepsTheCount) {
  World w;
  auto client = w.store.client(0);
  for (const char* key : {"/p/c", "/p/a", "/p/b", "/q", "/o"})
    client->txn({.compare = {}, .success = {Put{key, key, 0}}, .failure = {}});
  const auto by_key = client->range({.key = "/p/", .range_end = prefix_end("/p/")});
  ASSERT_EQ(by_key.kvs.size(), 3u);
  EXPECT_EQ(by_key.kvs[0].key, "/p/a");
  EXPECT_EQ(by_key.kvs[2].key, "/p/c");
  const auto oldest = client->range(
      {.key = "/p/", .range_end = prefix_end("/p/"), .limit = 1, .oldest_first = true});
  ASSERT_EQ(oldest.kvs.size(), 1u);
  EXPECT_EQ(oldest.kvs[0].key, "/p/c");
  EXPECT_EQ(oldest.count, 3);
  // "\0" as range_end: every key from `key` on.
  EXPECT_EQ(client->range({.key = "/p/b", .range_end = std::string(1, '\0')}).kvs.size(), 3u);
}

TEST(StoreModel, ALeaseExpiresOnTheVirtualClockAndTakesItsKeys) {
  World w;
  auto client = w.store.client(0);
  const replica::Lease lease = client->lease_grant(3);
  EXPECT_EQ(lease.ttl_s, 3);
  EXPECT_EQ(client->lease_grant(1).ttl_s, 2);  // raised to etcd's least TTL
  client->txn({.compare = {}, .success = {Put{"k", "v", lease.id}}, .failure = {}});
  w.advance(std::chrono::seconds(2));
  EXPECT_EQ(client->lease_keepalive(lease.id), 3);  // refreshed: 3 s from now
  w.advance(std::chrono::milliseconds(2900));
  EXPECT_EQ(client->range(one_key("k")).kvs.size(), 1u);
  const std::int64_t before = client->range(one_key("k")).revision;
  w.advance(std::chrono::milliseconds(100));
  const auto gone = client->range(one_key("k"));
  EXPECT_TRUE(gone.kvs.empty());
  EXPECT_EQ(gone.revision, before + 1);  // the expiry is a write
  EXPECT_EQ(client->lease_keepalive(lease.id), 0);
  client->lease_revoke(lease.id);  // already gone: not an error
  // A put under a lease the store does not know is refused whole.
  EXPECT_EQ(
      category_of([&] {
        client->txn(
            {.compare = {}, .success = {Put{"x", "1", 0}, Put{"y", "1", lease.id}}, .failure = {}});
      }),
      ErrorCategory::protocol);
  EXPECT_TRUE(client->range(one_key("x")).kvs.empty());
}

TEST(StoreModel, AnElectionFencesOnCreateRevision) {
  World w;
  auto a_client = w.store.client(0), b_client = w.store.client(1);
  Election a(*a_client, kPrefix, "tracker-a"), b(*b_client, kPrefix, "tracker-b");
  const replica::LeaseId a_lease = a_client->lease_grant(2).id;
  const replica::LeaseId b_lease = b_client->lease_grant(2).id;
  a.campaign(a_lease);
  b.campaign(b_lease);
  ASSERT_EQ(a.poll(), Election::Standing::leading);
  ASSERT_EQ(b.poll(), Election::Standing::waiting);
  EXPECT_EQ(b.leader()->value, "tracker-a");
  EXPECT_EQ(Election::observe(*b_client, kPrefix)->term, a.term());
  ASSERT_FALSE(a.fenced(commit_round(1, "hash-1")).deposed);

  // a stops its keepalives (paused): its key goes with its lease, b leads, a's write is refused.
  w.advance(std::chrono::milliseconds(1500));
  EXPECT_GT(b_client->lease_keepalive(b_lease), 0);
  w.advance(std::chrono::milliseconds(500));
  ASSERT_EQ(b.poll(), Election::Standing::leading);
  EXPECT_GT(b.term(), a.term());
  const auto zombie = a.fenced(commit_round(2, "forked-hash"));
  EXPECT_TRUE(zombie.deposed);
  EXPECT_FALSE(zombie.result.succeeded);
  EXPECT_EQ(a.poll(), Election::Standing::lost);
  ASSERT_FALSE(b.fenced(commit_round(2, "hash-2")).deposed);
  EXPECT_EQ(b_client->range(one_key("/loco/test-run/commit/2")).kvs.at(0).value, "hash-2");
  // The leader's own compare failing is not being deposed: round 1 is committed once.
  const auto again = b.fenced(commit_round(1, "hash-1-again"));
  EXPECT_FALSE(again.deposed);
  EXPECT_FALSE(again.result.succeeded);
}

TEST(StoreModel, DownOrCutCallsFailAndChangeNothingAndLeasesOutliveAnOutage) {
  World w;
  auto a = w.store.client(0), b = w.store.client(1);
  const replica::LeaseId lease = a->lease_grant(3).id;
  a->txn({.compare = {}, .success = {Put{"k", "v", lease}}, .failure = {}});
  w.store.set_cut(0, true);
  EXPECT_EQ(category_of([&] { a->txn(commit_round(1, "h")); }), ErrorCategory::network);
  EXPECT_EQ(category_of([&] { a->lease_keepalive(lease); }), ErrorCategory::network);
  EXPECT_TRUE(b->range(one_key("/loco/test-run/commit/1")).kvs.empty());
  w.store.set_cut(0, false);

  w.store.set_down(true);
  EXPECT_EQ(category_of([&] { b->range(one_key("k")); }), ErrorCategory::network);
  w.advance(std::chrono::seconds(10));  // no lease expires while no member leads
  w.store.set_down(false);
  w.advance(std::chrono::milliseconds(2900));  // then each has its whole TTL again
  EXPECT_EQ(b->range(one_key("k")).kvs.size(), 1u);
  w.advance(std::chrono::milliseconds(100));
  EXPECT_TRUE(b->range(one_key("k")).kvs.empty());
}

// A lost answer: the write lands, its client is told nothing but an error (so a leader cannot
// announce it); a read or a write that changes nothing keeps the fault armed; it fires once.
TEST(StoreModel, ALostAnswerLeavesTheWriteLandedAndFiresOnce) {
  World w;
  auto a = w.store.client(0), b = w.store.client(1);
  w.store.lose_next_answer(0);
  EXPECT_TRUE(a->range(one_key("/loco/test-run/commit/1")).kvs.empty());
  a->txn({.compare = {}, .success = {}, .failure = {}});  // changes nothing: answered
  EXPECT_EQ(category_of([&] { a->txn(commit_round(1, "h")); }), ErrorCategory::network);
  EXPECT_EQ(w.store.answers_lost(), 1u);
  const auto landed = b->range(one_key("/loco/test-run/commit/1")).kvs;
  ASSERT_EQ(landed.size(), 1u);
  EXPECT_EQ(landed[0].value, "h");
  EXPECT_TRUE(a->txn(commit_round(2, "h")).succeeded);  // answered again
  w.store.lose_next_answer(1);
  w.store.lose_next_answer(1, false);  // disarmed
  EXPECT_TRUE(b->txn(commit_round(3, "h")).succeeded);
  EXPECT_EQ(w.store.answers_lost(), 1u);
}

}  // namespace
}  // namespace loco::sim
