// Checkpoint custody with real processes on loopback: two loco-peer processes train with the
// tracker pulling a copy of the run's state every round; both are SIGKILLed (and the tracker,
// restarted); a newcomer joins, fetches the state from the tracker's custody copy over its tracker
// link, and the run goes on from that copy's round. Every wait is on a line a process prints
// (peer_process.hpp).

#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "../support/local_swarm.hpp"
#include "loco/checkpoint/safetensors.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

// Waits, with `peer`'s rounds as the clock, until the tracker has stored a custody copy.
void wait_for_a_copy(LocalSwarm& swarm, PeerProcess& peer) {
  std::uint64_t round = 2;
  for (; round < 60 && swarm.tracker().log().find("custody copy of round") == std::string::npos;
       ++round)
    ASSERT_TRUE(peer.wait_round(round)) << swarm.logs();
  ASSERT_LT(round, 60u) << "no custody copy\n" << swarm.logs();
}

// Two peers train until the tracker has stored a copy, then are SIGKILLed (and the tracker too,
// when `restart`: it finds its copies in its folder again); a newcomer must start from the newest
// copy, the state the killed peers committed for that round, and train on from it.
void a_newcomer_recovers_from_the_copy(const std::string& run_id, bool restart) {
  // A short eviction timeout: when the copy is older than the last commit, the tracker gives the
  // killed peers that long to come back before the run goes back to the copy.
  LocalSwarm swarm(run_id, 1000, {"--tracker.custody-every", "1", "--run.eviction-timeout", "3s"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "50"};
  PeerProcess& a = swarm.add_peer("peer0", options);
  PeerProcess& b = swarm.add_peer("peer1", options);
  wait_for_a_copy(swarm, a);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(a.process().stop(SIGKILL), -1);
  EXPECT_EQ(b.process().stop(SIGKILL), -1);
  a.read_to_end();  // every round it printed
  if (restart) {
    EXPECT_EQ(swarm.tracker().process().stop(SIGKILL), -1);
    swarm.restart_tracker();
    ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  }

  PeerProcess& newcomer = swarm.add_peer("newcomer", options);
  ASSERT_TRUE(newcomer.wait_committed()) << swarm.logs();
  const std::uint64_t first = newcomer.committed().begin()->first;
  const std::uint64_t copied = first - 1;  // the round of the copy it started from
  ASSERT_GE(copied, 1u) << "it started from the genesis state, not the copy\n" << swarm.logs();
  ASSERT_TRUE(a.committed().contains(copied)) << swarm.logs();
  // The copy is the state the killed peers committed, and the newcomer fetched it.
  const std::string state = a.committed().at(copied).substr(0, 12);
  const std::string expected =
      restart ? "the newest of round " + std::to_string(copied) + " (state " + state + ")"
              : "custody copy of round " + std::to_string(copied) + " stored: state " + state;
  EXPECT_NE(swarm.tracker().log().find(expected), std::string::npos) << swarm.logs();
  EXPECT_NE(newcomer.log().find("fetched the state of round " + std::to_string(copied)),
            std::string::npos)
      << swarm.logs();
  // It trains on from there, one round after another.
  ASSERT_TRUE(newcomer.wait_round(first + 2)) << swarm.logs();
  std::uint64_t last = copied;
  for (const test::RoundLine& r : newcomer.rounds()) {
    if (r.kind == "committed") {
      EXPECT_EQ(r.round, last + 1) << swarm.logs();
      last = r.round;
    }
  }
  EXPECT_EQ(newcomer.process().stop(SIGTERM), 0) << swarm.logs();
}

// The organiser gets the model: `loco-tracker export` writes the newest copy's parameters, whose
// state hash is the one the peers committed for that round, while the run goes on.
TEST(Custody, TheTrackerExportsTheModelOfACommittedRound) {
  LocalSwarm swarm("run-export", 1000, {"--tracker.custody-every", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<std::string> options = {"--debug.step-delay", "50"};
  PeerProcess& a = swarm.add_peer("peer0", options);
  PeerProcess& b = swarm.add_peer("peer1", options);
  wait_for_a_copy(swarm, a);
  if (::testing::Test::HasFatalFailure()) return;

  const auto out = swarm.dir() / "model.safetensors";
  test::ChildProcess exporter(
      {test::program("loco-tracker"), "export", "--out", out.string(), "--run.id", "run-export",
       "--run.config", (swarm.dir() / "swarm.toml").string(), "--tracker.state-file",
       (swarm.dir() / "tracker.state").string()},
      swarm.dir() / "export.log");
  const std::string said = exporter.read_line(test::kLinePatienceMs);
  EXPECT_EQ(exporter.wait(), 0) << test::read_text(swarm.dir() / "export.log");
  EXPECT_TRUE(said.starts_with("exported round ")) << said;

  const auto model = checkpoint::SafetensorsFile::read(out);
  const std::uint64_t exported = std::stoull(model.metadata().at("loco.round"));
  EXPECT_TRUE(model.contains("transformer.wte.weight"));
  ASSERT_TRUE(a.wait_round(exported)) << swarm.logs();
  ASSERT_TRUE(a.committed().contains(exported)) << swarm.logs();
  EXPECT_TRUE(model.metadata().at("loco.state_hash").starts_with(a.committed().at(exported)))
      << "round " << exported << ": " << model.metadata().at("loco.state_hash") << " against "
      << a.committed().at(exported);
  EXPECT_EQ(a.process().stop(SIGTERM), 0);
  EXPECT_EQ(b.process().stop(SIGTERM), 0);
}

TEST(Custody, ANewcomerRecoversTheStateFromTheTrackerWhenEveryPeerIsGone) {
  a_newcomer_recovers_from_the_copy("run-custody", false);
}

TEST(Custody, ARestartedTrackerServesTheCopiesItFindsOnDisk) {
  a_newcomer_recovers_from_the_copy("run-custody-restart", true);
}

}  // namespace
}  // namespace loco
