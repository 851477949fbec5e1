// A tracker restart with real processes on loopback (issue 49): three loco-peer processes train
// with min-peers 1; the tracker is SIGKILLed and started again from its state file while one peer
// is held (SIGSTOP) until after the others are back. The restarted tracker must wait for it, its
// grace (restart-grace) allowing, so that the first round after the restart holds all three:
// the first peer back used to train a round alone, and the others threw their phase away.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

TEST(TrackerRestart, TheFirstRoundAfterARestartHoldsEveryMemberOfTheLastView) {
  LocalSwarm swarm("run-tracker-restart", 1000, {"--run.restart-grace", "10s"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "20"};
  std::vector<PeerProcess*> peers;
  for (int i = 0; i < 3; ++i) peers.push_back(&swarm.add_peer("peer" + std::to_string(i), options));
  for (PeerProcess* p : peers) ASSERT_TRUE(p->wait_round(3)) << swarm.logs();

  PeerProcess& late = *peers[2];
  ASSERT_EQ(::kill(late.process().pid(), SIGSTOP), 0);
  EXPECT_EQ(swarm.tracker().process().stop(SIGKILL), -1);
  std::vector<std::size_t> before;
  for (PeerProcess* p : peers) before.push_back(p->rounds().size());
  swarm.restart_tracker();
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  // The others are back within a reconnect (0.5 s); the late one a while after them.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(::kill(late.process().pid(), SIGCONT), 0);

  for (std::size_t i = 0; i < peers.size(); ++i) {
    PeerProcess& p = *peers[i];
    // Its first round committed after the restart holds all three, and it threw no phase away
    // (replaced) before it. A round the restart interrupted may end skipped.
    const auto committed_after = [&]() -> const test::RoundLine* {
      for (std::size_t r = before[i]; r < p.rounds().size(); ++r)
        if (p.rounds()[r].kind == "committed") return &p.rounds()[r];
      return nullptr;
    };
    while (committed_after() == nullptr) ASSERT_FALSE(p.wait_for("round ").empty()) << swarm.logs();
    const test::RoundLine& first = *committed_after();
    EXPECT_EQ(first.members, 3u) << "peer " << i << ": round " << first.round << "\n"
                                 << swarm.logs();
    for (std::size_t r = before[i]; p.rounds()[r].round != first.round; ++r)
      EXPECT_NE(p.rounds()[r].kind, "replaced")
          << "peer " << i << ", round " << p.rounds()[r].round;
  }
  EXPECT_NE(swarm.tracker().log().find("all 3 members of the last saved view are back"),
            std::string::npos)
      << swarm.tracker().log();
  for (PeerProcess* p : peers) EXPECT_EQ(p->process().stop(SIGTERM), 0) << swarm.logs();
}

}  // namespace
}  // namespace loco
