// The election against a real etcd (tests/support/etcd_cluster.hpp): one member, then three.
// Leases are 1 s, so a stopped keepalive deposes a leader in about a second; the tests wait for
// the events (the follower's poll turning to leading), never for a fixed time.

#include "loco/replica/election.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../support/etcd_cluster.hpp"
#include "loco/core/error.hpp"
#include "loco/etcd/etcd_client.hpp"

namespace loco::etcd {
namespace {

using replica::Election;
using replica::one_key;
using replica::prefix_end;

const std::string kPrefix = "/loco/test-run/leader/";

// A candidate: its own client (its own connections, as a replica on its own host has) and lease.
struct Candidate {
  Candidate(const test::EtcdCluster& cluster, const std::string& name)
      : client(cluster.client_options()), election(client, kPrefix, name) {
    lease = client.lease_grant(1).id;
    election.campaign(lease);
  }
  EtcdClient client;
  Election election;
  LeaseId lease = 0;
};

// A write only the leader may make: commit round `round` with `hash`, once.
Txn commit_round(int round, const std::string& hash) {
  const std::string key = "/loco/test-run/commit/" + std::to_string(round);
  return {.compare = {{.key = key, .target = Compare::Target::create_revision, .value = 0}},
          .success = {Put{.key = key, .value = hash, .lease = 0}},
          .failure = {}};
}

// Calls `call` until the store answers, as a replica does while the cluster elects a raft leader
// after losing a member (no member answers, or one answers "leader changed"). Hang guard: 30 s.
template <class Call>
auto until_answered(Call call) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    try {
      return call();
    } catch (const Error& e) {
      if (std::chrono::steady_clock::now() > give_up) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Polls `follower` (keeping its lease alive) until it leads. Hang guard: 30 s.
void wait_until_leading(Candidate& follower) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (until_answered([&] { return follower.election.poll(); }) != Election::Standing::leading) {
    ASSERT_GT(until_answered([&] { return follower.client.lease_keepalive(follower.lease); }), 0);
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the follower never took over";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the poll period
  }
}

TEST(Election, TheFirstCandidateLeadsAndTheOthersSeeIt) {
  test::EtcdCluster cluster(1);
  Candidate a(cluster, "tracker-a"), b(cluster, "tracker-b"), c(cluster, "tracker-c");
  EXPECT_EQ(a.election.poll(), Election::Standing::leading);
  EXPECT_EQ(b.election.poll(), Election::Standing::waiting);
  EXPECT_EQ(c.election.poll(), Election::Standing::waiting);
  ASSERT_TRUE(b.election.leader());
  EXPECT_EQ(b.election.leader()->value, "tracker-a");
  EXPECT_EQ(b.election.leader()->term, a.election.term());
  EXPECT_LT(a.election.term(), b.election.term());
  EtcdClient observer(cluster.client_options());
  EXPECT_EQ(Election::observe(observer, kPrefix)->value, "tracker-a");
  // Campaigning again with the same lease (a restarted loop) finds the same key and term.
  const std::int64_t term = a.election.term();
  EXPECT_EQ(a.election.campaign(a.lease), term);
}

TEST(Election, ALeaderWhoseLeaseExpiresIsReplacedAndItsFencedWritesAreRefused) {
  test::EtcdCluster cluster(1);
  Candidate a(cluster, "tracker-a"), b(cluster, "tracker-b");
  ASSERT_EQ(a.election.poll(), Election::Standing::leading);
  const auto first = a.election.fenced(commit_round(1, "hash-1"));
  ASSERT_FALSE(first.deposed);
  EXPECT_TRUE(first.result.succeeded);

  // a stops its keepalives (a paused or cut-off process): b takes over once a's lease expires.
  wait_until_leading(b);
  EXPECT_GT(b.election.term(), a.election.term());
  EXPECT_EQ(b.election.leader()->value, "tracker-b");

  // a still believes it leads (it has not polled): its fenced write is refused, nothing lands.
  const auto zombie = a.election.fenced(commit_round(2, "forked-hash"));
  EXPECT_TRUE(zombie.deposed);
  EXPECT_FALSE(zombie.result.succeeded);
  EXPECT_EQ(a.election.poll(), Election::Standing::lost);
  const auto second = b.election.fenced(commit_round(2, "hash-2"));
  ASSERT_FALSE(second.deposed);
  EXPECT_TRUE(second.result.succeeded);
  const RangeResult round2 = b.client.range(one_key("/loco/test-run/commit/2"));
  ASSERT_EQ(round2.kvs.size(), 1u);
  EXPECT_EQ(round2.kvs[0].value, "hash-2");

  // The leader's own compare failing is not being deposed: round 1 is committed once.
  const auto again = b.election.fenced(commit_round(1, "hash-1-again"));
  EXPECT_FALSE(again.deposed);
  EXPECT_FALSE(again.result.succeeded);
}

TEST(Election, ResigningOrARevokedLeaseHandsOverAtTheNextPoll) {
  test::EtcdCluster cluster(1);
  Candidate a(cluster, "tracker-a"), b(cluster, "tracker-b"), c(cluster, "tracker-c");
  ASSERT_EQ(a.election.poll(), Election::Standing::leading);
  a.election.resign();
  EXPECT_EQ(b.election.poll(), Election::Standing::leading);
  EXPECT_EQ(c.election.poll(), Election::Standing::waiting);
  EXPECT_EQ(c.election.leader()->value, "tracker-b");
  b.client.lease_revoke(b.lease);
  b.client.lease_revoke(b.lease);  // a lease already gone is not an error
  EXPECT_EQ(c.election.poll(), Election::Standing::leading);
  EXPECT_EQ(b.election.poll(), Election::Standing::lost);
  EXPECT_EQ(b.client.lease_keepalive(b.lease), 0);
}

TEST(Election, ThreeMembersFailOverWithOneMemberKilled) {
  test::EtcdCluster cluster(3);
  Candidate a(cluster, "tracker-a"), b(cluster, "tracker-b");
  ASSERT_EQ(a.election.poll(), Election::Standing::leading);
  ASSERT_FALSE(a.election.fenced(commit_round(1, "hash-1")).deposed);

  // The member both clients talk to first dies: they go on through the other two (a resent
  // commit whose first answer was lost finds its key there: the listing below says once).
  cluster.kill_member(0);
  ASSERT_GT(until_answered([&] { return a.client.lease_keepalive(a.lease); }), 0);
  ASSERT_FALSE(
      until_answered([&] { return a.election.fenced(commit_round(2, "hash-2")); }).deposed);

  wait_until_leading(b);
  EXPECT_TRUE(a.election.fenced(commit_round(3, "forked-hash")).deposed);
  EXPECT_FALSE(
      until_answered([&] { return b.election.fenced(commit_round(3, "hash-3")); }).deposed);
  const RangeResult commits = b.client.range({.key = "/loco/test-run/commit/",
                                              .range_end = prefix_end("/loco/test-run/commit/"),
                                              .limit = 0,
                                              .oldest_first = true});
  ASSERT_EQ(commits.kvs.size(), 3u);
  EXPECT_EQ(commits.kvs[0].value, "hash-1");
  EXPECT_EQ(commits.kvs[1].value, "hash-2");
  EXPECT_EQ(commits.kvs[2].value, "hash-3");
}

}  // namespace
}  // namespace loco::etcd
