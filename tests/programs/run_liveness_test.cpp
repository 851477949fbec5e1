// The run never stops (issue 44; docs/SECURITY.md, "Liveness"): members that lie together, or one
// liar beside a single honest member, in a real swarm on loopback (a loco-tracker, loco-peer
// processes and loco-member-attacker processes, tests/tools/loco_member_attacker.cpp). Whatever the
// tracker decides about them, rounds must keep committing for the honest members. Every wait is on
// a line a process prints; tracker_liveness tests in tests/proto have each rule in virtual time.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "../support/member_attacks.hpp"

namespace loco {
namespace {

using namespace test;  // LocalSwarm, Attacker and the checks of member_attacks.hpp

// Two colluding members among four honest ones: one returns its segment's mean negated where it
// owns a segment, the other signs a wrong result for the segment it checks. An honest member
// between them in the group's order is disputed by both in one attempt. Before issue 44 that
// benched it (a second partner) and then its neighbours, until more than half of the live
// members sat on the bench and no group could form again.
TEST(RunLiveness, TwoColludingDisputersDoNotFreezeTheRun) {
  LocalSwarm swarm("run-collude", 1000, {"--run.min-peers", "4"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm, 4);
  ASSERT_TRUE(honest[0]->wait_round(1)) << swarm.logs();
  Attacker owner(swarm, "run-collude", "wrong-mean", {}, "liar-owner");
  Attacker checker(swarm, "run-collude", "disputer", {}, "liar-checker");
  ASSERT_NE(owner.wait_for("group "), "") << owner.log() << swarm.logs();
  ASSERT_NE(checker.wait_for("group "), "") << checker.log() << swarm.logs();
  wait_for_tracker_line(swarm, honest, "signed different means");
  // With both liars still in the run, the honest members commit round after round.
  expect_the_run_went_on(swarm, honest, 8);
  EXPECT_TRUE(owner.process().running()) << owner.log();
  EXPECT_TRUE(checker.process().running()) << checker.log();
  EXPECT_EQ(owner.process().stop(SIGTERM), 0);
  EXPECT_EQ(checker.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// One poisoner beside one honest member: a group of two, where nobody else can see the evidence.
// The honest member's report is one word against another: it must not bench the honest member,
// and once the poisoner has left, the honest member and a newcomer commit rounds together at once.
TEST(RunLiveness, APoisonerInAGroupOfTwoThatLeavesDoesNotFreezeTheRun) {
  LocalSwarm swarm("run-pair", 1000, {"--run.min-peers", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& first = swarm.add_peer("peer0", kHonest);
  Attacker poisoner(swarm, "run-pair", "poison");
  ASSERT_NE(poisoner.wait_for("joined "), "") << poisoner.log() << swarm.logs();
  // Three attempts of a group of two with the poisoner in it.
  for (int i = 0; i < 3; ++i)
    ASSERT_NE(poisoner.wait_for("group "), "") << poisoner.lines() << swarm.logs();
  EXPECT_EQ(poisoner.process().stop(SIGTERM), 0);
  PeerProcess& second = swarm.add_peer("peer1", kHonest);
  const std::vector<PeerProcess*> honest = {&first, &second};
  ASSERT_TRUE(second.wait_committed()) << swarm.logs();
  expect_the_run_went_on(swarm, honest, 4, second.committed().begin()->first);
  const std::string log = swarm.tracker().log();
  EXPECT_EQ(log.find("sits out rounds up to"), std::string::npos)
      << "an honest member of a group of two was benched\n"
      << log;
  stop_all(honest);
}

}  // namespace
}  // namespace loco
