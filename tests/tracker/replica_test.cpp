// A loco-tracker replica's standing (tracker/replica.hpp): its options, and against a real
// one-member etcd (tests/support/etcd_cluster.hpp) the hand-over when a leader resigns or loses
// its lease, and a deposed leader's save refused.

#include "tracker/replica.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../support/etcd_cluster.hpp"
#include "loco/core/error.hpp"
#include "tracker/etcd_state.hpp"
#include "tracker/tracker_options.hpp"

namespace loco::tracker {
namespace {

std::string config_error(const TrackerOptions& options) {
  try {
    replica_config(options);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    return e.what();
  }
  return "no error";
}

TEST(ReplicaConfig, NamesEveryMemberAndRefusesWhatEtcdCannotTake) {
  TrackerOptions o;
  o.run_id = "run";
  o.listen = "10.0.0.1:7700";
  o.etcd = "http://10.0.0.1:2379,10.0.0.2:2379";
  const ReplicaConfig config = replica_config(o);
  ASSERT_EQ(config.client.endpoints.size(), 2u);
  EXPECT_EQ(config.client.endpoints[1].host, "10.0.0.2");
  EXPECT_EQ(config.prefix, "/loco/run/");
  EXPECT_EQ(config.name, "10.0.0.1:7700");  // no --tracker.replica: its address
  EXPECT_EQ(config.lease, std::chrono::seconds(3));
  EXPECT_EQ(config.client.io_timeout, std::chrono::seconds(1));  // a third of the lease

  TrackerOptions bad = o;
  bad.etcd = "https://10.0.0.1:2379";
  EXPECT_NE(config_error(bad).find("--tracker.etcd"), std::string::npos);
  bad = o;
  bad.etcd = "http://10.0.0.1:2379,";
  EXPECT_NE(config_error(bad).find("--tracker.etcd"), std::string::npos);
  bad = o;
  bad.etcd_lease = "1500ms";
  EXPECT_NE(config_error(bad).find("whole seconds"), std::string::npos);
  bad = o;
  bad.etcd_lease = "0s";
  EXPECT_NE(config_error(bad).find("--tracker.etcd-lease"), std::string::npos);
}

ReplicaConfig config_of(const test::EtcdCluster& cluster, const std::string& name) {
  return ReplicaConfig{.client = cluster.client_options(),
                       .prefix = "/loco/run/",
                       .name = name,
                       .lease = std::chrono::seconds(2)};
}

const std::atomic<bool> kNoStop = false;

TEST(Replica, TheNextReplicaLeadsOnceTheLeaderResignsOrLosesItsLease) {
  test::EtcdCluster cluster(1);
  Replica a(config_of(cluster, "a")), b(config_of(cluster, "b")), c(config_of(cluster, "c"));
  const std::int64_t a_term = a.wait_until_leading(kNoStop).value();
  EXPECT_TRUE(a.still_leading(steady_now()));
  EtcdState a_state(a.store(), a.election(), a.prefix());
  proto::TrackerSnapshot saved;
  saved.run_id = "run";
  saved.committed_round = 7;
  ASSERT_TRUE(a_state.save(saved));

  // b campaigns (in a thread: it blocks until it leads) and takes over once a resigns.
  std::atomic<std::int64_t> b_term = 0;
  std::thread waiting([&] { b_term = b.wait_until_leading(kNoStop).value(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(b_term.load(), 0);  // a still leads
  a.resign();
  waiting.join();
  EXPECT_GT(b_term, a_term);
  EXPECT_FALSE(a_state.save(saved));  // a no longer leads: refused

  // b's lease revoked behind its back (as when it expires): b is deposed, c leads.
  std::int64_t c_term = 0;
  std::thread next([&] { c_term = c.wait_until_leading(kNoStop).value(); });
  etcd::EtcdClient admin(cluster.client_options());
  const auto keys = admin.range({.key = "/loco/run/leader/",
                                 .range_end = replica::prefix_end("/loco/run/leader/"),
                                 .limit = 0,
                                 .oldest_first = true});
  ASSERT_FALSE(keys.kvs.empty());
  admin.lease_revoke(keys.kvs.front().lease);
  EXPECT_FALSE(b.still_leading(steady_now()));
  next.join();
  EXPECT_GT(c_term, b_term);
  EtcdState c_state(c.store(), c.election(), c.prefix());
  EXPECT_EQ(c_state.load(), saved);
}

TEST(Replica, AFollowerToldToStopResignsAndReturnsNothing) {
  test::EtcdCluster cluster(1);
  Replica leader(config_of(cluster, "leader")), follower(config_of(cluster, "follower"));
  ASSERT_TRUE(leader.wait_until_leading(kNoStop));
  std::atomic<bool> stop = false;  // set here, read by the waiting thread
  std::optional<std::int64_t> term = 0;
  std::thread waiting([&] { term = follower.wait_until_leading(stop); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  stop = true;  // as the signal handler does
  waiting.join();
  EXPECT_FALSE(term);
  // Its key is gone at once, not a lease later: only the leader's is left.
  etcd::EtcdClient admin(cluster.client_options());
  const auto keys = admin.range({.key = "/loco/run/leader/",
                                 .range_end = replica::prefix_end("/loco/run/leader/"),
                                 .limit = 0,
                                 .oldest_first = true});
  ASSERT_EQ(keys.kvs.size(), 1u);
  EXPECT_EQ(keys.kvs.front().value, "leader");
}

}  // namespace
}  // namespace loco::tracker
