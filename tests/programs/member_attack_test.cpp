// Members that lie, in a real swarm on loopback (issue 24; docs/TRACKER.md, "Members that lie"):
// a loco-tracker, three honest loco-peer processes and one loco-member-attacker, a member with its
// own key speaking the protocol (tests/tools/loco_member_attacker.cpp). For each finding the
// attack must fail, the honest peers must hold one state with finite losses, the run must go on
// committing rounds, and the tracker's log must stay small and hold only its own lines. Every wait
// is on a line a process prints (peer_process.hpp); tracker_strangers_test.cpp has each rule in
// virtual time.

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../support/member_attacks.hpp"

namespace loco {
namespace {

using namespace test;  // LocalSwarm, Attacker and the checks of member_attacks.hpp

// Finding 1: a member that names an honest member of its group at every attempt, to be left
// alone with a group it commits for. An accusation costs the accuser: the first of a round is
// taken on trust, a second takes the accuser out with the member it names (and benches it for a
// round here), so it is never left with a group of its own, and no honest member is removed from
// the run.
TEST(MemberAttack, AnAccuserTakesNothingOver) {
  LocalSwarm swarm(
      "run-accuse", 1000,
      {"--run.min-peers", "3", "--run.accusation-grace", "500ms", "--run.accusation-bench", "1"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker accuser(swarm, "run-accuse", "accuse");
  ASSERT_NE(accuser.wait_for("joined "), "") << accuser.log() << swarm.logs();
  // Two rounds of accusations: each round's first on trust, its second costing the accuser.
  for (int i = 0; i < 4; ++i)
    ASSERT_NE(accuser.wait_for("accused "), "") << accuser.lines() << swarm.logs();
  EXPECT_TRUE(wait_for_bench(accuser)) << accuser.lines() << swarm.logs();
  EXPECT_EQ(accuser.process().stop(SIGTERM), 0);
  expect_the_run_went_on(swarm, honest, 3);
  EXPECT_EQ(accuser.lines().find("committed "), std::string::npos)
      << "no round commits with the accuser in it\n"
      << accuser.lines();
  // It is never left with fewer than a majority of the group of 4 as formed.
  std::istringstream lines(accuser.lines());
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("group ")) {
      EXPECT_GE(std::stoul(line.substr(line.rfind(' ') + 1)), 3u) << accuser.lines();
    }
  EXPECT_EQ(swarm.tracker().log().find("removed after misbehaving"), std::string::npos)
      << swarm.logs();
  stop_all(honest);
}

// Finding 1, the run's side: with the accuser still in the run, rounds go on committing. Its
// second accusation of a round gives that round up (the two left of the group of 4 are no
// majority), and then it sits out the next 10 rounds (accusation-bench), which commit. The bench
// is read from what the tracker tells the accuser, not from the tracker's log, which bounds the
// lines about one peer (wait_for_bench).
TEST(MemberAttack, AnAccuserDoesNotStopTheRun) {
  LocalSwarm swarm("run-accuse-live", 1000,
                   {"--run.min-peers", "3", "--run.accusation-grace", "500ms"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker accuser(swarm, "run-accuse-live", "accuse");
  ASSERT_NE(accuser.wait_for("accused "), "") << accuser.log() << swarm.logs();
  // The next rounds of the first honest peer, whatever became of them.
  const std::size_t before = honest[0]->rounds().size();
  while (honest[0]->rounds().size() < before + 6)
    ASSERT_NE(honest[0]->wait_for("round "), "") << swarm.logs();
  std::size_t committed = 0;
  for (std::size_t i = before; i < honest[0]->rounds().size(); ++i)
    if (honest[0]->rounds()[i].kind == "committed") ++committed;
  EXPECT_GE(committed, 5u) << "of 6 rounds\n" << accuser.lines() << swarm.logs();
  EXPECT_TRUE(wait_for_bench(accuser)) << accuser.lines() << swarm.logs();
  EXPECT_EQ(accuser.process().stop(SIGTERM), 0);
  expect_the_run_went_on(swarm, honest, 2);
  stop_all(honest);
}

// Finding 2: a member that declares an update norm of 0 (to pull the group's reference down or
// switch the receivers' check off) and sends values of 1e30 (int8 blocks of scale ~1e30). The
// reference is the upper median of the declared norms, the receivers check what they get against
// it and all name the sender, which sits the retry out: every round commits with the three honest
// members only.
TEST(MemberAttack, APoisonerDeclaringANormOfZeroIsLeftOut) {
  LocalSwarm swarm("run-poison", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  Attacker poisoner(swarm, "run-poison", "poison");
  ASSERT_NE(poisoner.wait_for("joined "), "") << poisoner.log() << swarm.logs();
  ASSERT_NE(poisoner.wait_for("group "), "") << poisoner.log() << swarm.logs();
  wait_for_tracker_line(swarm, honest, "named by 3 of its group of 4");
  expect_the_run_went_on(swarm, honest, 2);
  expect_committed_by(swarm, honest, 3);
  EXPECT_TRUE(poisoner.process().running()) << poisoner.log();
  EXPECT_EQ(poisoner.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// A segment owner that sends everyone its segment's mean negated, with its result statement
// signed over what it sent (checked owners, the tracker's default). Its checker's statement
// disagrees, every member holds the proof; the retry keeps both, no longer neighbours, and a
// third member, an honest loco-peer, judges the dispute from the members' contributions and finds
// the checker's mean: the owner is benched on this first lie, and lying again with its new
// checker, sits the next retry out alone. Every round commits with the four honest members, and
// no honest member is left out.
TEST(MemberAttack, AnOwnerReturningAWrongMeanIsProvenAndSitsTheRetryOut) {
  LocalSwarm swarm("run-wrong-mean", 1000, {"--run.min-peers", "4"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  std::vector<PeerProcess*> honest = start_honest(swarm);
  honest.push_back(&swarm.add_peer("peer3", kHonest));
  Attacker liar(swarm, "run-wrong-mean", "wrong-mean");
  ASSERT_NE(liar.wait_for("joined "), "") << liar.log() << swarm.logs();
  ASSERT_NE(liar.wait_for("group "), "") << liar.log() << swarm.logs();
  wait_for_tracker_line(swarm, honest, "signed a wrong one and sits out the run's next");
  const std::string log = swarm.tracker().log();
  EXPECT_NE(log.find("signed different means"), std::string::npos) << swarm.logs();
  EXPECT_EQ(log.find("both sit the retry out"), std::string::npos) << swarm.logs();
  expect_the_run_went_on(swarm, honest, 2);
  expect_committed_by(swarm, honest, 4);
  EXPECT_TRUE(liar.process().running()) << liar.log();
  EXPECT_EQ(liar.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// Finding 3: a member that joins an empty run first, with a genesis of its own choosing, to fix
// the state the run starts from. The genesis is the run config's: it is refused, and the honest
// peers that come after start from the config's.
TEST(MemberAttack, AGenesisSquatterIsRefused) {
  LocalSwarm swarm("run-squat", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  Attacker squatter(swarm, "run-squat", "genesis-squat");
  const std::string refused = squatter.wait_for("refused ");
  EXPECT_NE(refused.find("initial state has hash " + std::string(64, '0')), std::string::npos)
      << refused << "\n"
      << squatter.log() << swarm.logs();
  EXPECT_EQ(squatter.process().wait(), 0);
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  expect_the_run_went_on(swarm, honest, 3);
  stop_all(honest);
}

// Finding 4: a member that floods the tracker with malformed messages and with reasons that hold
// newlines and terminal escapes (a forged log line). The first is the end of it: the connection is
// cut off, nothing more it sent is read, its key may not join again, and the log holds neither the
// forged line nor an escape byte. Each kind of message comes first once, from a key of its own.
TEST(MemberAttack, AFlooderIsCutOffAndMayNotJoinAgain) {
  LocalSwarm swarm("run-flood", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  std::string cuts;
  for (const std::string first : {"leave", "report", "heartbeat"}) {
    Attacker flooder(swarm, "run-flood", "flood", {"--first", first}, "flooder-" + first);
    ASSERT_NE(flooder.wait_for("joined "), "") << flooder.log() << swarm.logs();
    const std::string cut = flooder.wait_for("cut off after ");
    ASSERT_NE(cut, "") << flooder.log() << swarm.logs();
    const std::string refused = flooder.wait_for("refused ");
    EXPECT_NE(refused.find("cut off for breaking the protocol"), std::string::npos)
        << flooder.lines() << flooder.log();
    EXPECT_EQ(flooder.process().wait(), 0);
    cuts += first + " first: " + cut + "\n";
  }
  expect_the_run_went_on(swarm, honest, 2);
  const std::string log = swarm.tracker().log();
  EXPECT_LT(std::filesystem::file_size(swarm.dir() / "tracker.log"), kLogBound) << cuts;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << "an escape byte in the tracker's log";
  EXPECT_EQ(log.find("FORGED"), std::string::npos) << log;
  for (const char* bad :
       {"sent a bad leave", "sent a bad misbehaviour report", "sent a bad heartbeat"})
    EXPECT_NE(log.find(bad), std::string::npos) << bad << "\n" << log;
  stop_all(honest);
}

// Finding 4, well-formed: a member that reports 2,000 others for misbehaving, each time a key no
// member holds, with a reason of 1,000 bytes, as fast as its connection takes them. A report is
// not a proof: the log tallies them under the reporter, whatever key each names, and the tracker
// cuts the reporter off once it has spent its message budget.
TEST(MemberAttack, ReportsNamingStrangersDoNotFloodTheLog) {
  LocalSwarm swarm("run-reports", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker reporter(swarm, "run-reports", "flood-reports", {"--count", "2000"});
  ASSERT_NE(reporter.wait_for("joined "), "") << reporter.log() << swarm.logs();
  // Cut off once it spent its message budget (500 at once, then 50 a second), before the
  // malformed message that ends its reports.
  ASSERT_NE(reporter.wait_for("cut off after "), "") << reporter.log() << swarm.logs();
  // (Why is summarised with its other warnings, the tally's business: the removal is logged.)
  EXPECT_NE(swarm.tracker().log().find("removed after misbehaving"), std::string::npos)
      << swarm.logs();
  EXPECT_EQ(reporter.process().wait(), 0);
  expect_the_run_went_on(swarm, honest, 2);
  EXPECT_LT(std::filesystem::file_size(swarm.dir() / "tracker.log"), kLogBound);
  stop_all(honest);
}

// Finding 4, by joining: a member that joins, leaves and joins again, 2,000 times, each a valid
// message. The log writes a peer's first four joins and leaves of 10 s in full and then a summary
// of the period ("saw 1200 joins and leaves from peer ... in the last 10 s").
TEST(MemberAttack, JoiningAndLeavingDoesNotFloodTheLog) {
  LocalSwarm swarm("run-churn", 1000, {"--run.min-peers", "3"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker churner(swarm, "run-churn", "churn", {"--count", "2000"});
  ASSERT_NE(churner.wait_for("churned 2000"), "") << churner.log() << swarm.logs();
  EXPECT_EQ(churner.process().wait(), 0);
  expect_the_run_went_on(swarm, honest, 2);
  EXPECT_LT(std::filesystem::file_size(swarm.dir() / "tracker.log"), kLogBound);
  stop_all(honest);
}

// Finding 5: a member that joins and then never says ready and never fetches the state it is
// told to fetch, to hold every round up. It is waited for `wait-rounds` rounds (each at most the
// join timeout), then rounds form without it, and it never sits in a group.
TEST(MemberAttack, AnIdleMemberHoldsUpAFewRoundsAtMost) {
  LocalSwarm swarm("run-idle", 1000,
                   {"--run.min-peers", "3", "--run.join-timeout", "2s", "--run.wait-rounds", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker idle(swarm, "run-idle", "idle");
  ASSERT_NE(idle.wait_for("told to fetch "), "") << idle.log() << swarm.logs();
  expect_the_run_went_on(swarm, honest, 8);
  EXPECT_EQ(swarm.tracker().log().find("a group of 4"), std::string::npos) << swarm.logs();
  EXPECT_TRUE(idle.process().running()) << "a member still\n" << idle.log();
  EXPECT_EQ(idle.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// Finding 5, before joining: a connection that completes the handshake and the bundle hello and
// never sends a join request holds a connection slot until the join deadline, no longer.
TEST(MemberAttack, AConnectionThatNeverJoinsIsClosedAtTheJoinDeadline) {
  LocalSwarm swarm("run-idle-admitted", 1000,
                   {"--run.min-peers", "3", "--tracker.join-deadline", "2s"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker idle(swarm, "run-idle-admitted", "idle-admitted");
  ASSERT_NE(idle.wait_for("admitted"), "") << idle.log() << swarm.logs();
  ASSERT_NE(idle.wait_for("cut off after "), "") << idle.log() << swarm.logs();
  EXPECT_EQ(idle.process().wait(), 0);
  EXPECT_NE(swarm.tracker().log().find("did not join within 2 s"), std::string::npos)
      << swarm.logs();
  expect_the_run_went_on(swarm, honest, 2);
  stop_all(honest);
}

// Finding 5, slots: one address may hold at most --tracker.max-members-per-address members (and
// so data shards). Three honest peers and one idle member fill a cap of 4; a second idle member
// from the same address is refused.
TEST(MemberAttack, OneAddressHoldsAtMostTheCapOfMembers) {
  LocalSwarm swarm("run-cap", 1000,
                   {"--run.min-peers", "3", "--run.join-timeout", "2s", "--run.wait-rounds", "2",
                    "--tracker.max-members-per-address", "4"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker fourth(swarm, "run-cap", "idle", {}, "fourth");
  ASSERT_NE(fourth.wait_for("joined "), "") << fourth.log() << swarm.logs();
  Attacker fifth(swarm, "run-cap", "idle", {}, "fifth");
  const std::string refused = fifth.wait_for("refused ");
  EXPECT_NE(refused.find("the run admits at most 4 peers from one network"), std::string::npos)
      << refused << "\n"
      << fifth.log();
  EXPECT_EQ(fifth.process().wait(), 0);
  expect_the_run_went_on(swarm, honest, 2);
  EXPECT_EQ(fourth.process().stop(SIGTERM), 0);
  stop_all(honest);
}

// Finding 6: a member that reports holding the state of round 2^63, to push the run's round (or a
// restarted tracker's) where no honest peer can follow. The report is refused and not stored; the
// honest peers commit one round after the other.
TEST(MemberAttack, AStateReportFromTheFutureIsRefused) {
  LocalSwarm swarm("run-future", 1000,
                   {"--run.min-peers", "3", "--run.join-timeout", "2s", "--run.wait-rounds", "2"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  const std::vector<PeerProcess*> honest = start_honest(swarm);
  ASSERT_TRUE(honest[0]->wait_round(2)) << swarm.logs();
  Attacker liar(swarm, "run-future", "future-report");
  ASSERT_NE(liar.wait_for("reported round 9223372036854775808"), "") << liar.log() << swarm.logs();
  expect_the_run_went_on(swarm, honest, 4);
  EXPECT_NE(swarm.tracker().log().find("reported the state of round 9223372036854775808, past "
                                       "the run's round"),
            std::string::npos)
      << swarm.logs();
  for (PeerProcess* p : honest) {
    std::uint64_t last = 0;
    for (const auto& [round, state] : p->committed()) {
      if (last != 0) {
        EXPECT_EQ(round, last + 1) << swarm.logs();
      }
      last = round;
    }
  }
  EXPECT_EQ(liar.process().stop(SIGTERM), 0);
  stop_all(honest);
}

}  // namespace
}  // namespace loco
