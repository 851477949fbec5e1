// Volunteers behind home routers (docs/VOLUNTEER.md), with real processes in network namespaces
// the test makes itself (support/home_network.hpp): the tracker and one peer in a public
// namespace, peers at home behind nftables masquerades that let nothing in. The tracker's probe
// finds which one it can reach, a home peer dials the public one and both send on that link, and
// a DiLoCo run commits every round with one state; two home peers share rounds through the public
// one, which relays their end-to-end encrypted link.
// Every wait is on a line a process prints, with the generous guards of peer_process.hpp. Needs
// root (CI runs as root): a machine where the namespaces cannot be made fails here, saying why.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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

// The bytes a peer says at its end it relayed ("relayed N bytes between ..."), 0 if none.
std::uint64_t relayed_bytes(const std::string& log) {
  static constexpr std::string_view kSaid = "relayed ";
  for (auto at = log.find(kSaid); at != std::string::npos; at = log.find(kSaid, at + 1)) {
    const auto digits = at + kSaid.size();
    if (digits < log.size() && std::isdigit(static_cast<unsigned char>(log[digits])) != 0)
      return std::stoull(log.substr(digits));
  }
  return 0;
}

// Why the test's namespaces could not be made.
std::string cannot_make(const HomeNetwork& net) {
  return "cannot make the test's network namespaces (root, iproute2, nftables and, for a UPnP "
         "home, miniupnpd are needed):\n" +
         net.why();
}

// A test's run: its directory, the run config of `rounds` rounds, and the tracker in the public
// namespace of `net`, which starts the rounds once `min_peers` are in.
struct TrackedRun {
  TrackedRun(const HomeNetwork& net, const std::string& run_id, std::uint64_t rounds, int min_peers)
      : config(test::write_swarm_config(dir.path(), rounds)),
        tracker(dir.path(), run_id, options(min_peers), HomeNetwork::public_host() + ":0", config,
                net.in("pub")),
        run{.dir = dir.path(),
            .run_id = run_id,
            .config = config,
            .tracker_address = tracker.address(),
            .tracker_key = tracker.public_key()} {}

  static std::vector<std::string> options(int min_peers) {
    std::vector<std::string> o = test::kSwarmTimers;
    o.insert(o.end(), {"--run.min-peers", std::to_string(min_peers)});
    return o;
  }

  test::TempDir dir;
  std::string config;
  test::TrackerProcess tracker;
  test::SwarmRun run;  // what every peer is given
};

// A peer in the public namespace and one in home 1 of `tracked`'s run, and what a failing test
// prints.
struct PublicAndHome {
  PublicAndHome(const HomeNetwork& net, const TrackedRun& tracked)
      : tracker(tracked.tracker),
        open(tracked.run, "public", {"--peer.listen", HomeNetwork::public_host() + ":0"},
             net.in("pub")),
        home(tracked.run, "home", {"--peer.listen", HomeNetwork::home_host(1) + ":0"},
             net.in("h1")) {}
  std::string logs() const {
    return "--- tracker\n" + tracker.log() + "--- public\n" + open.log() + "--- home\n" +
           home.log();
  }

  const test::TrackerProcess& tracker;
  PeerProcess open;
  PeerProcess home;
};

TEST(HomeRouter, APeerNobodyCanDialTrainsWithAReachableOneOverTheLinkItOpens) {
  HomeNetwork net(1);
  ASSERT_TRUE(net.up()) << cannot_make(net);
  constexpr std::uint64_t kRounds = 10;
  TrackedRun tracked(net, "home-router", kRounds, 2);
  ASSERT_TRUE(tracked.tracker.started()) << tracked.tracker.log();
  const test::TempDir& dir = tracked.dir;
  const test::TrackerProcess& tracker = tracked.tracker;
  PublicAndHome peers(net, tracked);
  PeerProcess& open = peers.open;
  PeerProcess& home = peers.home;
  const auto logs = [&] { return peers.logs(); };

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

// The must-show of docs/VOLUNTEER.md: the tracker and one peer in the public namespace, two homes
// of two peers each, the second home's router running miniupnpd (UPnP-IGD alone). One peer there
// maps its port and is measured reachable; the other (mapping turned off) and both of the first
// home are not. Links between a reachable and an unreachable member are dialled by the unreachable
// one (the home's own mapped peer through the router's NAT loopback), the three links between
// unreachable ones are relayed by a reachable member. All five train every round to one state, the
// relayed bytes are in the tracker's /metrics, and the mapping is gone from the router once its
// peer has left.
TEST(HomeRouter, FivePeersInTwoHomesOneMappedByUpnpTrainToOneState) {
  HomeNetwork net(2, /*upnp_home=*/2, "upnp");
  ASSERT_TRUE(net.up()) << cannot_make(net);
  constexpr std::uint64_t kRounds = 10;
  TrackedRun tracked(net, "five-homes", kRounds, 5);  // every round has all five
  ASSERT_TRUE(tracked.tracker.started()) << tracked.tracker.log();
  const test::TempDir& dir = tracked.dir;
  const test::TrackerProcess& tracker = tracked.tracker;
  const test::SwarmRun& run = tracked.run;
  // Rounds of 200 ms at least, so that heartbeats report the relayed bytes while the run goes on.
  const auto listen = [](const std::string& host) {
    return std::vector<std::string>{"--peer.listen", host + ":0", "--debug.step-delay", "50"};
  };
  std::vector<std::string> unmapped = listen(HomeNetwork::home_host(2));
  unmapped.insert(unmapped.end(), {"--peer.port-mapping", "false"});
  PeerProcess open(run, "public", listen(HomeNetwork::public_host()), net.in("pub"));
  PeerProcess first(run, "home1a", listen(HomeNetwork::home_host(1)), net.in("h1"));
  PeerProcess second(run, "home1b", listen(HomeNetwork::home_host(1)), net.in("h1"));
  PeerProcess mapped(run, "home2a", listen(HomeNetwork::home_host(2)), net.in("h2"));
  PeerProcess behind(run, "home2b", unmapped, net.in("h2"));
  const std::vector<PeerProcess*> peers = {&open, &first, &second, &mapped, &behind};
  const auto logs = [&] {
    std::string all = "--- tracker\n" + tracker.log();
    for (std::size_t i = 0; i < peers.size(); ++i)
      all += "--- peer " + std::to_string(i) + "\n" + peers[i]->log();
    return all;
  };

  ASSERT_TRUE(mapped.wait_round(2)) << logs();
  EXPECT_FALSE(net.router_mappings(2).empty()) << "miniupnpd holds the mapping\n" << logs();
  // The relays' heartbeats report what they forwarded (until the run ends and they leave).
  std::map<std::string, double> metrics;
  const auto patience = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    metrics = net.metrics_in("pub", tracker.http_address());
    if (sample_of(metrics, "loco_tracker_relayed_bytes") > 0 ||
        std::chrono::steady_clock::now() > patience)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the next sample
  }
  const auto sample = [&](const std::string& name) { return sample_of(metrics, name); };
  EXPECT_GT(sample("loco_tracker_relayed_bytes"), 0.0) << logs();
  const std::string unreachable_id = short_id_of_key_file(dir.path() / "home1a.key");
  EXPECT_EQ(sample("loco_tracker_member_relayed_bytes_total{peer=\"" + unreachable_id + "\"}"), 0.0)
      << "an unreachable member relays nothing\n"
      << logs();
  EXPECT_EQ(sample("loco_tracker_members_reachable"), 2.0) << logs();
  EXPECT_EQ(sample("loco_tracker_members_unreachable"), 3.0) << logs();
  const std::string mapped_id = short_id_of_key_file(dir.path() / "home2a.key");
  EXPECT_EQ(sample("loco_tracker_member_reachable{peer=\"" + mapped_id + "\"}"), 1.0) << logs();
  EXPECT_EQ(sample("loco_tracker_members_left_out_total"), 0.0) << logs();
  // Three unreachable members of a group linking every pair: three relayed links each round.
  EXPECT_GE(sample("loco_tracker_relayed_links_total"), 3.0) << logs();

  std::vector<std::string> states;
  for (PeerProcess* p : peers) {
    states.push_back(final_state(p->read_to_end()));
    EXPECT_EQ(p->process().wait(), 0) << logs();
    ASSERT_FALSE(p->rounds().empty()) << logs();
    EXPECT_EQ(p->rounds().back().round, kRounds) << logs();
    EXPECT_EQ(p->rounds().back().members, 5u) << logs();
  }
  EXPECT_TRUE(test::same_states(peers, 1, kRounds)) << logs();
  for (const std::string& s : states) EXPECT_EQ(s, states[0]) << logs();
  EXPECT_FALSE(states[0].empty()) << logs();

  const auto forwards =
      mapped.log().find("the router forwards " + HomeNetwork::router_host(2) + ":");
  ASSERT_NE(forwards, std::string::npos) << logs();
  EXPECT_NE(mapped.log().find("(UPnP, renewed every", forwards), std::string::npos) << logs();
  EXPECT_NE(tracker.log().find("reachable at " + HomeNetwork::router_host(2) + ":"),
            std::string::npos)
      << logs();
  EXPECT_NE(first.log().find("no port mapping on the router"), std::string::npos) << logs();
  EXPECT_NE(behind.log().find("not reachable from the internet"), std::string::npos) << logs();
  // The relays say what they carried; together, something.
  EXPECT_GT(relayed_bytes(open.log()) + relayed_bytes(mapped.log()), 0u) << logs();
  EXPECT_EQ(net.router_mappings(2), "") << "removed when its peer left\n" << logs();
}

// A router that offers NAT-PMP/PCP alone (miniupnpd with UPnP off): the home peer maps its port
// by NAT-PMP, is measured reachable at the router's external address, trains with the public peer,
// and the mapping is removed when it leaves.
TEST(HomeRouter, APeerBehindANatPmpRouterMapsItsPortAndIsReachable) {
  HomeNetwork net(1, /*upnp_home=*/1, "natpmp");
  ASSERT_TRUE(net.up()) << cannot_make(net);
  constexpr std::uint64_t kRounds = 4;
  TrackedRun tracked(net, "natpmp", kRounds, 2);
  ASSERT_TRUE(tracked.tracker.started()) << tracked.tracker.log();
  const test::TempDir& dir = tracked.dir;
  const test::TrackerProcess& tracker = tracked.tracker;
  PublicAndHome peers(net, tracked);
  PeerProcess& open = peers.open;
  PeerProcess& home = peers.home;
  const auto logs = [&] { return peers.logs(); };

  ASSERT_TRUE(home.wait_round(1)) << logs();
  EXPECT_FALSE(net.router_mappings(1).empty()) << "miniupnpd holds the mapping\n" << logs();
  const auto metrics = net.metrics_in("pub", tracker.http_address());
  const std::string home_id = short_id_of_key_file(dir.path() / "home.key");
  EXPECT_EQ(sample_of(metrics, "loco_tracker_member_reachable{peer=\"" + home_id + "\"}"), 1.0)
      << logs();
  EXPECT_EQ(sample_of(metrics, "loco_tracker_members_unreachable"), 0.0) << logs();

  for (PeerProcess* p : {&open, &home}) {
    p->read_to_end();
    EXPECT_EQ(p->process().wait(), 0) << logs();
  }
  EXPECT_TRUE(test::same_states({&open, &home}, 1, kRounds)) << logs();
  const auto forwards = home.log().find("the router forwards " + HomeNetwork::router_host(1) + ":");
  ASSERT_NE(forwards, std::string::npos) << logs();
  EXPECT_NE(home.log().find("(NAT-PMP, renewed every", forwards), std::string::npos) << logs();
  EXPECT_NE(tracker.log().find("reachable at " + HomeNetwork::router_host(1) + ":"),
            std::string::npos)
      << logs();
  EXPECT_EQ(net.router_mappings(1), "") << "removed when its peer left\n" << logs();
}

// A relay SIGKILLed mid-round. Two public peers can relay, the first with the larger budget, so
// it relays the two home peers' link; it kills itself (--debug.die-at: SIGKILL, no leave) on the
// first relayed message of round 3 or later, in the middle of that round's exchange. The attempt
// is aborted and retried without it, the other public peer relaying; the three survivors commit
// that round and every later one together, with one state, and nothing hangs.
TEST(HomeRouter, ARelayKilledMidRoundIsReplacedAndTheOthersGoOn) {
  HomeNetwork net(1);
  ASSERT_TRUE(net.up()) << cannot_make(net);
  constexpr std::uint64_t kRounds = 8;
  TrackedRun tracked(net, "relay-killed", kRounds, 3);
  ASSERT_TRUE(tracked.tracker.started()) << tracked.tracker.log();
  const test::TrackerProcess& tracker = tracked.tracker;
  const test::SwarmRun& run = tracked.run;
  const auto peer_options = [](const std::string& host, const std::string& relay_pairs) {
    return std::vector<std::string>{"--peer.listen", host + ":0", "--peer.relay-pairs",
                                    relay_pairs};
  };
  std::vector<std::string> dying = peer_options(HomeNetwork::public_host(), "4");
  dying.insert(dying.end(), {"--debug.die-at", "relay:3"});
  PeerProcess relay(run, "relay", dying, net.in("pub"));
  PeerProcess spare(run, "spare", peer_options(HomeNetwork::public_host(), "1"), net.in("pub"));
  PeerProcess first(run, "home1", peer_options(HomeNetwork::home_host(1), "4"), net.in("h1"));
  PeerProcess second(run, "home2", peer_options(HomeNetwork::home_host(1), "4"), net.in("h1"));
  const std::vector<PeerProcess*> survivors = {&spare, &first, &second};
  const auto logs = [&] {
    return "--- tracker\n" + tracker.log() + "--- relay\n" + relay.log() + "--- spare\n" +
           spare.log() + "--- home1\n" + first.log() + "--- home2\n" + second.log();
  };

  std::vector<std::string> states;
  for (PeerProcess* p : survivors) {
    states.push_back(final_state(p->read_to_end()));
    EXPECT_EQ(p->process().wait(), 0) << logs();
  }
  EXPECT_EQ(relay.process().wait(), -1) << "killed by its signal\n" << logs();
  // The round it died in: the first from 3 on with both home peers in it (a relayed link).
  static constexpr std::string_view kDying = "--debug.die-at: dying at round ";
  const std::string relay_log = relay.log();
  const auto dying_at = relay_log.find(kDying);
  ASSERT_NE(dying_at, std::string::npos) << logs();
  const std::uint64_t killed_in = std::stoull(relay_log.substr(dying_at + kDying.size()));
  ASSERT_LT(killed_in, kRounds) << logs();
  const std::string tracker_log = tracker.log();
  // Round 3 ran with all four, the home peers' link through the relay, until the relay died.
  EXPECT_NE(tracker_log.find(
                fmt::format("round {} attempt 1: a group of 4, 1 link(s) relayed", killed_in)),
            std::string::npos)
      << logs();
  EXPECT_NE(tracker_log.find(fmt::format("round {} attempt 1 aborted", killed_in)),
            std::string::npos)
      << logs();
  // Its retry, and every later round, with the spare as the relay (the only reachable one left).
  for (std::uint64_t r = killed_in; r <= kRounds; ++r)
    EXPECT_NE(tracker_log.find(fmt::format("round {} committed by 3 of a group of 3", r)),
              std::string::npos)
        << "round " << r << "\n"
        << logs();
  EXPECT_NE(tracker_log.find("a group of 3, 1 link(s) relayed"), std::string::npos) << logs();
  // One state at the end. (A home peer that joined after round 1 formed fetched the state and
  // may print a round as "replaced" rather than committed: compare the final states.)
  EXPECT_FALSE(states[0].empty()) << logs();
  for (const std::string& state : states) EXPECT_EQ(state, states[0]) << logs();
  EXPECT_GT(relayed_bytes(spare.log()), 0u) << "the spare relayed after the kill\n" << logs();
}

}  // namespace
}  // namespace loco
