// Issue 49's fault runs made exact with real processes on loopback (loco-tracker and loco-peer):
// each test sets up one fault the issue found and checks what its fix promises. Peer restarts on
// new ports and a tracker restart are in peer_restart_test.cpp and tracker_restart_test.cpp.
// Every wait is on a line a process prints (peer_process.hpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerEnd;
using test::PeerProcess;

// Reads `peer`'s round lines until it prints one of `kind`; false if its output ends first.
bool prints_round(PeerProcess& peer, const std::string& kind) {
  while (peer.rounds().empty() || peer.rounds().back().kind != kind)
    if (peer.wait_for("round ").empty()) return false;
  return true;
}

// Item 1: a Streaming round given up keeps its number, so a member that gave one up holds a round
// fewer than the run's final round after train.steps steps. It must train on to the final round:
// it left "finished its steps" a round early, and one alone in its last rounds left holding the
// only copy of them ("rounds ... are lost"). Here the run needs its three peers (min-peers 3):
// peer 2 is SIGKILLed and peers 0 and 1 give rounds up until it is back (started again, it fetches
// the run's state). 10 x 4 steps, fragments of H = 4, P = 2: the final round is 19.
TEST(FaultRegression, AStreamingPeerThatGaveUpARoundTrainsOnToTheFinalRound) {
  constexpr std::uint64_t kFinalRound = 19;
  LocalSwarm swarm("fault-stream-end", 10, {"--run.min-peers", "3", "--run.join-timeout", "1s"},
                   test::streaming_strategy());
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "100"};
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i), options));
  ASSERT_TRUE(peers[2]->wait_committed()) << swarm.logs();
  EXPECT_EQ(peers[2]->process().stop(SIGKILL), -1);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(prints_round(*peers[i], "skipped")) << swarm.logs();
  peers[2] = &swarm.add_peer("peer2", options);

  std::vector<PeerEnd> ends;
  for (PeerProcess* p : peers) {
    const auto end = p->wait_end();
    ASSERT_TRUE(end) << swarm.logs();
    // Checked before the next peer's end is awaited: a peer left behind waits for a group.
    ASSERT_EQ(end->round, kFinalRound) << "peer " << ends.size() << "\n" << swarm.logs();
    ends.push_back(*end);
  }
  for (std::size_t i = 0; i < ends.size(); ++i) {
    EXPECT_EQ(ends[i].state, ends[0].state) << "peer " << i << "\n" << swarm.logs();
    EXPECT_EQ(peers[i]->process().wait(), 0) << swarm.logs();
  }
  EXPECT_GT(ends[0].step, 40u) << "peer 0 gave a round up: it trained past train.steps";
  EXPECT_EQ(swarm.tracker().log().find("are lost"), std::string::npos) << swarm.logs();
}

// Item 2: DiLoCo's round overlaps the next phase. Peer 2 stops itself (SIGSTOP) once the mean of
// round 2 is in, before it reports: the tracker evicts it and commits round 2 with the other two.
// Sent SIGCONT, it trains on from that mean, joins again (after its reconnect backoff, 0.5 s) and
// fetches round 2, which replaces its own between two steps: its phase is 1.6 s (16 steps of
// 100 ms). The next round's start placed the loop at round x H a second time, so its steps went
// back H ("round N | step S" twice) and it ran a round behind the run to its end, where it started
// a round past the final one. Every peer must end at the final round, 5, committed with the
// others, after the run's 80 steps, with one state.
TEST(FaultRegression, ADiLoCoPeerWhoseRoundIsReplacedEndsWithTheRunsStepsAndRound) {
  constexpr std::uint64_t kH = 16, kFinalRound = 5;
  LocalSwarm swarm("fault-diloco-replaced", kFinalRound * kH / test::kInnerSteps,
                   {"--run.min-peers", "2", "--run.eviction-timeout", "2s"},
                   test::diloco_strategy(kH));
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "20"};
  std::vector<PeerProcess*> peers = {
      &swarm.add_peer("peer0", options), &swarm.add_peer("peer1", options),
      &swarm.add_peer("peer2", {"--debug.step-delay", "100", "--debug.stop-at", "mean:2"})};
  // Round 2 (or a later one) commits without peer 2, frozen since its mean of round 2.
  const auto without_peer2 = [&] {
    const auto& rounds = peers[0]->rounds();
    return !rounds.empty() && rounds.back().round >= 2 && rounds.back().kind == "committed" &&
           rounds.back().members == 2;
  };
  while (!without_peer2()) ASSERT_FALSE(peers[0]->wait_for("round ").empty()) << swarm.logs();
  ASSERT_NE(peers[2]->log().find("--debug.stop-at: stopping at round 2"), std::string::npos)
      << swarm.logs();
  ASSERT_EQ(::kill(peers[2]->process().pid(), SIGCONT), 0);

  std::vector<PeerEnd> ends;
  for (PeerProcess* p : peers) {
    const auto end = p->wait_end();
    ASSERT_TRUE(end) << swarm.logs();
    EXPECT_EQ(end->round, kFinalRound) << "peer " << ends.size() << "\n" << swarm.logs();
    EXPECT_EQ(end->step, kFinalRound * kH) << "peer " << ends.size() << "\n" << swarm.logs();
    // Its last round is the final round, committed with the others: a peer a round behind started
    // one past it, refused ("the run ended at round 5 ... training on"), and skipped it.
    ASSERT_FALSE(p->rounds().empty()) << swarm.logs();
    EXPECT_EQ(p->rounds().back().round, kFinalRound) << "peer " << ends.size();
    EXPECT_EQ(p->rounds().back().kind, "committed") << "peer " << ends.size() << "\n"
                                                    << swarm.logs();
    if (!ends.empty()) {
      EXPECT_EQ(end->state, ends[0].state) << swarm.logs();
    }
    ends.push_back(*end);
  }
  EXPECT_TRUE(std::any_of(peers[2]->rounds().begin(), peers[2]->rounds().end(),
                          [](const test::RoundLine& r) { return r.kind == "replaced"; }))
      << "peer 2's round was replaced by the fetched state\n"
      << swarm.logs();
  for (PeerProcess* p : peers) EXPECT_EQ(p->process().wait(), 0) << swarm.logs();
}

// Item 4: DeMo's rounds (a step each) are shorter than a download of its state to a peer on a
// slow link, and each commit sends a member that is fetching a resync to the newer round. Peer 2
// stops (SIGSTOP, its connections open) and the rounds go on without it once it has missed one
// (wait-rounds 1); it is started again with the same key, still a member that missed its rounds,
// so no round waits for it, and with its download held to 400 kbit/s its fetch (59 KB) outlasts
// many rounds. When each resync started the fetch over, none ever ended and it trained no round
// again. Its fetch must run to its end and (after the one catch-up the tracker grants a fetch
// that ended behind the run) it must commit a round within kRounds rounds of the one it was
// first told to fetch.
TEST(FaultRegression, ARestartedDemoPeerWhoseFetchOutlastsARoundTrainsRoundsAgain) {
  constexpr std::uint64_t kRounds = 50;
  LocalSwarm swarm("fault-demo-fetch", 1000,
                   {"--run.min-peers", "2", "--run.wait-rounds", "1", "--run.join-timeout", "2s",
                    "--run.eviction-timeout", "60s"},
                   test::demo_strategy(false));
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "20"};
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i), options));
  ASSERT_TRUE(peers[2]->wait_committed()) << swarm.logs();
  PeerProcess& frozen = *peers[2];
  ASSERT_EQ(::kill(frozen.process().pid(), SIGSTOP), 0);
  // Rounds go on without it: it is no longer waited for.
  std::size_t without = 0;
  while (without < 5) {
    ASSERT_FALSE(peers[0]->wait_for("round ").empty()) << swarm.logs();
    const test::RoundLine& r = peers[0]->rounds().back();
    without += r.kind == "committed" && r.members == 2;
  }
  std::vector<std::string> slow = options;
  slow.insert(slow.end(), {"--link.download", "400kbit"});
  peers[2] = &swarm.add_peer("peer2", slow);

  // Peer 0's rounds tell the time: until peer 2 is told what to fetch, then kRounds more.
  while (!peers[2]->first_fetch())
    ASSERT_FALSE(peers[0]->wait_for("round ").empty()) << swarm.logs();
  const std::uint64_t told = *peers[2]->first_fetch();
  ASSERT_TRUE(peers[0]->wait_round(told + kRounds)) << swarm.logs();
  EXPECT_EQ(peers[2]->process().stop(SIGTERM), 0) << swarm.logs();
  peers[2]->read_to_end();
  const auto committed = peers[2]->committed();
  ASSERT_FALSE(committed.empty()) << "told to fetch round " << told << "\n" << swarm.logs();
  const std::uint64_t first = committed.begin()->first;
  std::printf("[ DEMO ] told to fetch round %llu, first committed round %llu\n",
              static_cast<unsigned long long>(told), static_cast<unsigned long long>(first));
  EXPECT_LE(first, told + kRounds) << swarm.logs();
  EXPECT_EQ(frozen.process().stop(SIGKILL), -1);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(peers[i]->process().stop(SIGTERM), 0) << swarm.logs();
}

}  // namespace
}  // namespace loco
