// Peers restarted on new ports, with real processes on loopback (issue 49): a restarted loco-peer
// listens on another port, and the tracker must probe it there again rather than take it for
// unreachable from its key's earlier probe. Once every peer has been restarted, the rounds must
// still hold all of them: with every member listed unreachable there is no relay, and each round
// had one member while the others sat it out.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

// Reads `peer`'s round lines until one from index `from` on is a round it committed with `members`
// members; false after `patience` more lines without one (or when its output ends).
bool commits_with(PeerProcess& peer, std::size_t members, std::size_t from,
                  std::size_t patience = 40) {
  for (std::size_t read = 0;; ++read) {
    const auto& rounds = peer.rounds();
    for (std::size_t i = from; i < rounds.size(); ++i)
      if (rounds[i].kind == "committed" && rounds[i].members == members) return true;
    if (read == patience || peer.wait_for("round ").empty()) return false;
  }
}

TEST(PeerRestart, PeersRestartedOnNewPortsAreProbedThereAndKeepTrainingTogether) {
  LocalSwarm swarm("run-peer-restart", 1000, {});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "20"};
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i), options));
  for (PeerProcess* p : peers) ASSERT_TRUE(commits_with(*p, 3, 0)) << swarm.logs();
  // One after another: SIGKILLed, and started again with the same key (its port is another).
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(peers[i]->process().stop(SIGKILL), -1);
    peers[i] = &swarm.add_peer("peer" + std::to_string(i), options);
    ASSERT_TRUE(commits_with(*peers[i], 3, 0)) << "peer " << i << " restarted\n" << swarm.logs();
  }
  // Every peer restarted: the rounds go on with all three.
  for (PeerProcess* p : peers) ASSERT_TRUE(commits_with(*p, 3, p->rounds().size())) << swarm.logs();
  const std::string tracker = swarm.tracker().log();
  EXPECT_EQ(tracker.find("not probed"), std::string::npos) << tracker;
  EXPECT_EQ(tracker.find("not reachable from the internet"), std::string::npos) << tracker;
  for (PeerProcess* p : peers) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

// A peer restarted while its old process is frozen (SIGSTOP: as a host that vanished with its
// connections open), with the same key, on a new port. Its donors each had a link to the old
// process at its old address; they must answer the new process at the address the tracker's view
// now lists, not on the link to the frozen one, where nothing is read: there the fetch waited for
// the donors' idle timeout (20 s) and failed. The restarted peer must commit a round with the
// others within kRounds rounds of the one it was first told to fetch.
TEST(PeerRestart, APeerRestartedWhileItsOldProcessIsFrozenFetchesAndTrainsWithinRounds) {
  constexpr std::uint64_t kRounds = 8;
  LocalSwarm swarm("run-frozen-restart", 1000, {"--run.min-peers", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "50"};
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i), options));
  for (PeerProcess* p : peers) ASSERT_TRUE(commits_with(*p, 3, 0)) << swarm.logs();
  PeerProcess& frozen = *peers[2];
  ASSERT_EQ(::kill(frozen.process().pid(), SIGSTOP), 0);
  peers[2] = &swarm.add_peer("peer2", options);

  ASSERT_TRUE(commits_with(*peers[2], 3, 0)) << swarm.logs();
  const auto fetched = peers[2]->first_fetch();
  ASSERT_TRUE(fetched) << swarm.logs();
  const std::uint64_t first = peers[2]->committed().begin()->first;
  EXPECT_LE(first, *fetched + kRounds) << "told to fetch round " << *fetched << "\n"
                                       << swarm.logs();
  EXPECT_EQ(frozen.process().stop(SIGKILL), -1);
  for (PeerProcess* p : peers) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

}  // namespace
}  // namespace loco
