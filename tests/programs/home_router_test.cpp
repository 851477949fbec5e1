// Volunteers behind home routers (docs/VOLUNTEER.md), with real processes in network namespaces
// the test makes itself (support/home_network.hpp): the tracker and one peer in a public
// namespace, one peer at home behind an nftables masquerade that lets nothing in. The tracker's
// probe finds which one it can reach, the home peer dials the public one and both send on that
// link, and a DiLoCo run of the two commits every round with one state. Every wait is on a line
// a process prints, with the generous guards of peer_process.hpp. Needs root (CI runs as root): a
// machine where the namespaces cannot be made fails here, saying why.

#include <gtest/gtest.h>

#include <string>

#include "../support/home_network.hpp"
#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::HomeNetwork;
using test::PeerProcess;

std::string short_id_of_key_file(const std::filesystem::path& path) {
  return secure::short_id(secure::read_key_file(path, secure::KeyOwner::peer).public_key());
}

TEST(HomeRouter, APeerNobodyCanDialTrainsWithAReachableOneOverTheLinkItOpens) {
  HomeNetwork net(1);
  ASSERT_TRUE(net.up()) << "cannot make the test's network namespaces (root, iproute2 and "
                           "nftables are needed):\n"
                        << net.why();
  constexpr std::uint64_t kRounds = 10;
  test::TempDir dir;
  const std::string config = test::write_swarm_config(dir.path(), kRounds);
  std::vector<std::string> options = test::kSwarmTimers;
  options.insert(options.end(), {"--run.min-peers", "2"});
  test::TrackerProcess tracker(dir.path(), "home-router", options,
                               HomeNetwork::public_host() + ":0", config, net.in("pub"));
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const test::SwarmRun run{.dir = dir.path(),
                           .run_id = "home-router",
                           .config = config,
                           .tracker_address = tracker.address(),
                           .tracker_key = tracker.public_key()};
  PeerProcess open(run, "public", {"--peer.listen", HomeNetwork::public_host() + ":0"},
                   net.in("pub"));
  PeerProcess home(run, "home", {"--peer.listen", HomeNetwork::home_host(1) + ":0"}, net.in("h1"));
  const auto logs = [&] {
    return "--- tracker\n" + tracker.log() + "--- public\n" + open.log() + "--- home\n" +
           home.log();
  };

  // Mid-run, the tracker's status says who is reachable.
  ASSERT_TRUE(open.wait_round(2) && home.wait_round(2)) << logs();
  const auto metrics = net.metrics_in("pub", tracker.http_address());
  const auto sample = [&](const std::string& name) {
    const auto it = metrics.find(name);
    return it == metrics.end() ? -1.0 : it->second;
  };
  EXPECT_EQ(sample("loco_tracker_members_reachable"), 1.0) << logs();
  EXPECT_EQ(sample("loco_tracker_members_unreachable"), 1.0) << logs();
  const std::string open_id = short_id_of_key_file(dir.path() / "public.key");
  const std::string home_id = short_id_of_key_file(dir.path() / "home.key");
  EXPECT_EQ(sample("loco_tracker_member_reachable{peer=\"" + open_id + "\"}"), 1.0) << logs();
  EXPECT_EQ(sample("loco_tracker_member_reachable{peer=\"" + home_id + "\"}"), 0.0) << logs();

  for (PeerProcess* p : {&open, &home}) {
    EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << logs();
    EXPECT_EQ(p->process().wait(), 0) << logs();
    ASSERT_FALSE(p->rounds().empty()) << logs();
    EXPECT_EQ(p->rounds().back().members, 2u) << logs();
  }
  EXPECT_TRUE(test::same_states({&open, &home}, 1, kRounds)) << logs();
  EXPECT_NE(home.log().find("not reachable from the internet"), std::string::npos) << logs();
  EXPECT_NE(open.log().find("reachable from the internet, other peers connect to it"),
            std::string::npos)
      << logs();
  EXPECT_NE(tracker.log().find("not reachable from the internet at " + HomeNetwork::home_host(1)),
            std::string::npos)
      << logs();
}

}  // namespace
}  // namespace loco
