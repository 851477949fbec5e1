// The run never stops (issue 44; docs/SECURITY.md, "Liveness"): members that lie together, or one
// liar beside a single honest member, in a real swarm on loopback (a loco-tracker, loco-peer
// processes and loco-member-attacker processes, tests/tools/loco_member_attacker.cpp). Whatever the
// tracker decides about them, rounds must keep committing for the honest members. Every wait is on
// a line a process prints; tracker_liveness tests in tests/proto have each rule in virtual time.

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <set>
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

// Issue 44, finding 1: two owners of six that return their segment's mean negated. The dispute
// rule's counting benched each liar from its second lie on, and an honest checker from its second
// dispute on: up to four of six at once, which stopped this run for good ("forming round 5 (2 of 6
// ready)") while benched members counted as live and benches counted committed rounds. Now the
// run goes on committing, and each dispute's judge (a third member: an honest loco-peer
// recomputes the segment; an attacker drawn as judge says nothing, and the dispute is counted)
// benches a liar on its first lie: a verdict names only an attacker.
TEST(RunLiveness, TwoWrongMeanOwnersOfSixDoNotStopTheRun) {
  LocalSwarm swarm("run-two-wrong-means", 1000, {"--run.min-peers", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> honest = start_honest(swarm);
  honest.push_back(&swarm.add_peer("peer3", kHonest));
  Attacker first(swarm, "run-two-wrong-means", "wrong-mean", {}, "attacker0");
  Attacker second(swarm, "run-two-wrong-means", "wrong-mean", {}, "attacker1");
  std::set<std::string> liar_ids;
  for (Attacker* liar : {&first, &second}) {
    const std::string joined = liar->wait_for("joined ");
    ASSERT_NE(joined, "") << liar->log() << swarm.logs();
    liar_ids.insert(joined.substr(joined.rfind(' ') + 1));
    ASSERT_NE(liar->wait_for("group "), "") << liar->log() << swarm.logs();
  }
  wait_for_tracker_line(swarm, honest, "sits out the run's next");
  // 8 rounds more; a benched honest member sits some out (it fetches them), so each round is
  // checked among those that committed it, not all four.
  const std::uint64_t until = newest_round(honest) + 8;
  for (PeerProcess* p : honest) ASSERT_TRUE(p->wait_round(until)) << swarm.logs();
  std::map<std::uint64_t, std::set<std::string>> states;
  for (PeerProcess* p : honest)
    for (const auto& [round, state] : p->committed()) states[round].insert(state);
  for (const auto& [round, held] : states) EXPECT_EQ(held.size(), 1u) << "round " << round;
  EXPECT_EQ(swarm.tracker().log().find("state " + kLiarsHash), std::string::npos) << swarm.logs();
  // For the record (--gtest_output=xml): how many it benched, and the rounds the peers committed.
  const std::string log = swarm.tracker().log();
  std::size_t by_verdict = 0, counted = 0;
  for (auto at = log.find(" signed a wrong one"); at != std::string::npos;
       at = log.find(" signed a wrong one", at + 1)) {
    ++by_verdict;
    const std::size_t id = log.rfind(": ", at);  // "...found the checker's mean: ID signed..."
    ASSERT_NE(id, std::string::npos);
    EXPECT_TRUE(liar_ids.contains(log.substr(id + 2, at - id - 2)))
        << "a verdict convicted an honest member: " << log.substr(id, at - id + 20);
  }
  for (auto at = log.find("disputed before and sits out"); at != std::string::npos;
       at = log.find("disputed before and sits out", at + 1))
    ++counted;
  EXPECT_GE(by_verdict, 1u) << swarm.logs();
  RecordProperty("benched_by_verdict", static_cast<int>(by_verdict));
  RecordProperty("benched_by_counting", static_cast<int>(counted));
  RecordProperty("rounds", static_cast<int>(newest_round(honest)));
  EXPECT_EQ(first.process().stop(SIGTERM), 0);
  EXPECT_EQ(second.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// Issue 44, finding 2: a poisoner beside one honest member and nobody else to see the evidence.
// The honest member's reports are one word against the other: neither is benched, and no round
// commits while both are there. Once the poisoner leaves, the honest member and a newcomer commit
// rounds again (the honest member was benched before, and the newcomer with it).
TEST(RunLiveness, APoisonerInAGroupOfTwoLocksNobodyOut) {
  LocalSwarm swarm("run-pair", 1000, {"--run.min-peers", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& first = swarm.add_peer("peer0", kHonest);
  {
    Attacker poisoner(swarm, "run-pair", "poison");
    ASSERT_NE(poisoner.wait_for("joined "), "") << poisoner.log() << swarm.logs();
    for (int group = 0; group < 4; ++group)  // two rounds of two attempts
      ASSERT_NE(poisoner.wait_for("group "), "") << poisoner.log() << swarm.logs();
    EXPECT_EQ(poisoner.process().stop(SIGTERM), 0);
  }
  const std::string log = swarm.tracker().log();
  EXPECT_NE(log.find("no other member of the group could confirm it"), std::string::npos)
      << swarm.logs();
  EXPECT_EQ(log.find("sits out the run's next"), std::string::npos) << swarm.logs();
  EXPECT_TRUE(first.committed().empty()) << "no round committed with the poisoner in it";
  PeerProcess& newcomer = swarm.add_peer("peer1", kHonest);
  ASSERT_TRUE(newcomer.wait_committed()) << swarm.logs();
  const std::uint64_t round = newcomer.committed().begin()->first;
  ASSERT_TRUE(first.wait_round(round + 2)) << swarm.logs();
  ASSERT_TRUE(newcomer.wait_round(round + 2)) << swarm.logs();
  const std::vector<PeerProcess*> honest = {&first, &newcomer};
  EXPECT_TRUE(same_states(honest, round, round + 2)) << swarm.logs();
  EXPECT_EQ(swarm.tracker().log().find("sits out the run's next"), std::string::npos)
      << swarm.logs();
  stop_all(honest);
}

}  // namespace
}  // namespace loco
