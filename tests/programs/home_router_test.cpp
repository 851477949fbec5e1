// Volunteers behind home routers (docs/VOLUNTEER.md), with real processes in network namespaces
// the test makes itself (support/home_network.hpp): the tracker and one peer in a public
// namespace, peers at home behind nftables masquerades that let nothing in. The tracker's probe
// finds which one it can reach, a home peer dials the public one and both send on that link, and
// a DiLoCo run commits every round with one state; two home peers share rounds through the public
// one, which relays their end-to-end encrypted link.
// Every wait is on a line a process prints, with the generous guards of peer_process.hpp. Needs
// root (CI runs as root): a machine where the namespaces cannot be made fails here, saying why.

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

// The state hash of a peer's last line ("peer …: seconds=… state=H").
std::string final_state(const std::string& last_line) {
  const auto at = last_line.rfind("state=");
  return at == std::string::npos ? "" : last_line.substr(at + 6, last_line.find(' ', at) - at - 6);
}

// A sample of `metrics`, or -1 when it is not there.
double sample_of(const std::map<std::string, double>& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  return it == metrics.end() ? -1.0 : it->second;
}

// What every peer of run `run_id` is given, with the tracker in the public namespace.
test::SwarmRun swarm_run(const test::TempDir& dir, const std::string& run_id,
                         const std::string& config, const test::TrackerProcess& tracker) {
  return test::SwarmRun{.dir = dir.path(),
                        .run_id = run_id,
                        .config = config,
                        .tracker_address = tracker.address(),
                        .tracker_key = tracker.public_key()};
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
  const test::SwarmRun run = swarm_run(dir, "home-router", config, tracker);
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
  const auto sample = [&](const std::string& name) { return sample_of(metrics, name); };
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

// Two homes, one of whose routers runs miniupnpd. miniupnpd maps nothing on the test's public
// addresses (TEST-NET-2 is reserved: it says the gateway is not connected), so this checks that
// loco-peer finds the router, says why there is no mapping, and goes on unreachable; a mapping
// that succeeds needs a public address, which a test here must not use. The two unreachable peers
// share rounds with the public one, their own link relayed by it (the direct exchange links every
// pair), and the run ends with one state everywhere.
TEST(HomeRouter, TwoHomePeersShareRoundsThroughThePublicPeerAsRelay) {
  HomeNetwork net(2, /*upnp_home=*/2);
  ASSERT_TRUE(net.up()) << "cannot make the test's network namespaces (root, iproute2, nftables "
                           "and miniupnpd are needed):\n"
                        << net.why();
  // Rounds of 200 ms at least, so that all three are in the run well before it ends.
  constexpr std::uint64_t kRounds = 30;
  const std::vector<std::string> slow = {"--debug.step-delay", "50"};
  test::TempDir dir;
  const std::string config = test::write_swarm_config(dir.path(), kRounds);
  std::vector<std::string> options = test::kSwarmTimers;
  options.insert(options.end(), {"--run.min-peers", "2"});
  test::TrackerProcess tracker(dir.path(), "two-homes", options, HomeNetwork::public_host() + ":0",
                               config, net.in("pub"));
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const test::SwarmRun run = swarm_run(dir, "two-homes", config, tracker);
  const auto listen = [&](const std::string& host) {
    std::vector<std::string> o = slow;
    o.insert(o.end(), {"--peer.listen", host + ":0"});
    return o;
  };
  PeerProcess open(run, "public", listen(HomeNetwork::public_host()), net.in("pub"));
  PeerProcess first(run, "home1", listen(HomeNetwork::home_host(1)), net.in("h1"));
  PeerProcess second(run, "home2", listen(HomeNetwork::home_host(2)), net.in("h2"));
  const auto logs = [&] {
    return "--- tracker\n" + tracker.log() + "--- public\n" + open.log() + "--- home1\n" +
           first.log() + "--- home2\n" + second.log();
  };

  // Once each home peer has taken part in a round, all three are members.
  ASSERT_TRUE(first.wait_committed() && second.wait_committed()) << logs();
  const auto metrics = net.metrics_in("pub", tracker.http_address());
  const auto sample = [&](const std::string& name) { return sample_of(metrics, name); };
  EXPECT_EQ(sample("loco_tracker_members_reachable"), 1.0) << logs();
  EXPECT_EQ(sample("loco_tracker_members_unreachable"), 2.0) << logs();
  EXPECT_EQ(sample("loco_tracker_members_left_out_total"), 0.0) << logs();
  EXPECT_GT(sample("loco_tracker_relayed_links_total"), 0.0) << logs();

  std::vector<std::string> states;
  for (PeerProcess* p : {&open, &first, &second}) {
    states.push_back(final_state(p->read_to_end()));
    EXPECT_EQ(p->process().wait(), 0) << logs();
    EXPECT_FALSE(p->committed().empty()) << "each took part in rounds\n" << logs();
  }
  EXPECT_FALSE(states[0].empty()) << logs();
  EXPECT_EQ(states[1], states[0]) << logs();
  EXPECT_EQ(states[2], states[0]) << logs();
  std::size_t with_all = 0;
  for (const auto& r : open.rounds()) with_all += r.members == 3u;
  EXPECT_GT(with_all, 0u) << "rounds with both home peers\n" << logs();
  // The public peer relayed their bytes, and says how many.
  const auto relayed = open.log().find("relayed ");
  ASSERT_NE(relayed, std::string::npos) << logs();
  EXPECT_GT(std::stoull(open.log().substr(relayed + 8)), 0u) << logs();
  EXPECT_NE(first.log().find("no port mapping on the router: no UPnP router answered"),
            std::string::npos)
      << logs();
  EXPECT_NE(second.log().find("no port mapping on the router: the UPnP gateway found is not "
                              "connected to the internet"),
            std::string::npos)
      << logs();
}

}  // namespace
}  // namespace loco
