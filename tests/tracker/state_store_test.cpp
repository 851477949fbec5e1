// Where loco-tracker keeps its state: the state file (the default), and a replica's key in etcd,
// written only while its election says it leads (a real one-member etcd,
// tests/support/etcd_cluster.hpp).

#include "tracker/state_store.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/etcd_cluster.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/etcd/etcd_client.hpp"
#include "tracker/etcd_state.hpp"

namespace loco::tracker {
namespace {

std::vector<std::byte> bytes_of(const std::string& text) {
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return {first, first + text.size()};
}

TEST(StateFile, ANewRunHasNoneAndASavedStateComesBack) {
  test::TempDir dir;
  StateFile file(dir / "tracker.state");
  EXPECT_FALSE(file.load());
  ASSERT_TRUE(file.save(bytes_of("round 7")));
  EXPECT_EQ(file.load(), bytes_of("round 7"));
  std::ofstream(dir / "huge.state") << std::string(kMaxStateBytes + 1, 'x');
  EXPECT_THROW(StateFile(dir / "huge.state").load(), Error);  // refused before it is read
}

TEST(EtcdState, OnlyTheLeaderSavesAndTheNextLeaderLoadsWhatItSaved) {
  test::EtcdCluster cluster(1);
  const std::string prefix = "/loco/run/leader/";
  const std::string key = "/loco/run/state";
  etcd::EtcdClient a_client(cluster.client_options()), b_client(cluster.client_options());
  etcd::Election a(a_client, prefix, "tracker-a"), b(b_client, prefix, "tracker-b");
  const etcd::LeaseId a_lease = a_client.lease_grant(5).id;
  a.campaign(a_lease);
  b.campaign(b_client.lease_grant(5).id);
  ASSERT_EQ(a.poll(), etcd::Election::Standing::leading);
  EtcdState a_state(a_client, a, key), b_state(b_client, b, key);
  EXPECT_FALSE(b_state.load());
  ASSERT_TRUE(a_state.save(bytes_of("round 1")));
  ASSERT_TRUE(a_state.save(bytes_of("round 2")));

  // a is deposed (its lease revoked, as when it expires): b leads and finds round 2.
  a_client.lease_revoke(a_lease);
  ASSERT_EQ(b.poll(), etcd::Election::Standing::leading);
  EXPECT_EQ(b_state.load(), bytes_of("round 2"));
  EXPECT_FALSE(a_state.save(bytes_of("round 3, forked")));  // refused: nothing written
  ASSERT_TRUE(b_state.save(bytes_of("round 3")));
  EXPECT_EQ(a_state.load(), bytes_of("round 3"));
}

}  // namespace
}  // namespace loco::tracker
