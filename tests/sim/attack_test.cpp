// Members that lie, in the simulator (behaviour.hpp): one of eight, then two of eight, send
// scaled, sign-flipped, random, stale or zero-then-huge updates, accuse an honest member every
// attempt, return their segment's mean negated as its owner or sign a wrong one as a checker
// (checked owners catch both), or stay silent. Over the direct exchange with the tracker's default
// trim, the run keeps committing, every peer that installs a round installs the same finite state,
// and the model still learns. How close the loss and the rounds stay to a clean run's is
// bench/sim-attacks.cpp's and bench/sim-liveness.cpp's to measure.

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "loco/core/error.hpp"
#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::minutes;

SwarmConfig attacked_swarm(std::uint64_t seed, std::map<std::size_t, Behaviour> liars,
                           std::size_t peers = 8) {
  SwarmConfig c = test::instant_swarm(seed, peers);
  c.all_reduce = proto::AllReduceAlgorithm::direct;
  c.tracker.trim = 0.25f;  // two of eight from each side: room for two liars
  c.behaviours = std::move(liars);
  c.mean_tolerance = 1e-4;
  return c;
}

bool finite_states(const Swarm& swarm) {
  for (std::size_t i = 0; i < swarm.peer_count(); ++i) {
    if (!swarm.peer_up(i)) continue;
    for (const float x : swarm.peer(i).state().theta)
      if (!std::isfinite(x)) return false;
  }
  return true;
}

// Returns the disputes between owners and checkers the tracker saw (proto/owner_check.hpp).
std::size_t expect_the_run_survives(const std::map<std::size_t, Behaviour>& liars,
                                    std::uint64_t seed, std::size_t chunk_values = 1 << 16) {
  test::print_seed(seed);
  SwarmConfig config = attacked_swarm(seed, liars);
  config.chunk_values = chunk_values;
  Swarm swarm(config);
  std::size_t disputes = 0;
  swarm.watch_tracker([&](const proto::TrackerEvent& e) {
    if (e.text.find("signed different means") != std::string::npos) ++disputes;
  });
  const float start = swarm.compute().loss(swarm.compute().genesis());
  swarm.start();
  if (!swarm.run_for(minutes(2))) {
    ADD_FAILURE() << "the simulation ran out of events";
    return disputes;
  }
  EXPECT_GE(swarm.rounds_committed(), 20u) << test::replay_hint(seed, "SimAttack.*");
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  EXPECT_TRUE(finite_states(swarm));
  // The honest members hold the committed state.
  const auto states = test::live_states(swarm);
  std::map<std::uint64_t, std::set<Digest>> by_round;
  for (const auto& [i, s] : states)
    if (!liars.contains(i)) by_round[s.first].insert(s.second);
  for (const auto& [round, hashes] : by_round) EXPECT_EQ(hashes.size(), 1u) << "round " << round;
  EXPECT_LT(swarm.mean_loss(), 0.5 * start) << test::replay_hint(seed, "SimAttack.*");
  return disputes;
}

TEST(SimAttack, OneLiarOfEightNeitherStallsNorPoisonsTheRun) {
  std::uint64_t seed = 300;
  for (const Behaviour b : {Behaviour::scaled, Behaviour::sign_flipped, Behaviour::random,
                            Behaviour::stale, Behaviour::zero_then_huge, Behaviour::accuser,
                            Behaviour::wrong_mean, Behaviour::one_segment}) {
    SCOPED_TRACE(std::string(name(b)));
    expect_the_run_survives({{3, b}}, seed++);
  }
}

// A liar that spoils one owner's segment only: that owner's word alone would not do, and said
// again would bench it with the liar. Its evidence (proto/unit_evidence.hpp) lets the others
// name the liar too: a majority names it each time, and no honest member is ever benched.
TEST(SimAttack, ALiarSpoilingOneSegmentIsNamedByAMajorityAndNoAccuserIsBenched) {
  const std::uint64_t seed = 500;
  test::print_seed(seed);
  Swarm swarm(attacked_swarm(seed, {{3, Behaviour::one_segment}}));
  std::size_t liar_named = 0;
  std::vector<std::string> honest_benched;
  swarm.watch_tracker([&](const proto::TrackerEvent& e) {
    if (!e.peer) return;
    if (e.kind == proto::TrackerEvent::Kind::misbehaved && *e.peer == swarm.peer_key(3) &&
        e.text.starts_with("named by"))
      ++liar_named;
    if (e.text.find("again, and no majority did") != std::string::npos)
      honest_benched.push_back(e.text);
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(2)));
  EXPECT_GE(liar_named, 1u) << test::replay_hint(seed, "SimAttack.*");
  EXPECT_TRUE(honest_benched.empty()) << honest_benched.front();
  EXPECT_GE(swarm.rounds_committed(), 20u);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
}

TEST(SimAttack, TwoLiarsOfEightNeitherStallNorPoisonTheRun) {
  std::uint64_t seed = 400;
  for (const Behaviour b :
       {Behaviour::sign_flipped, Behaviour::random, Behaviour::accuser, Behaviour::wrong_mean}) {
    SCOPED_TRACE(std::string(name(b)));
    expect_the_run_survives({{2, b}, {6, b}}, seed++);
  }
}

// Two owners of six that return their segment's mean negated (checked owners catch each lie):
// under the dispute rule's counting both liars and honest checkers they lied against got benched,
// four of six at once, which stopped a run of real processes for good. Benched members no longer
// hold the quorum back and benches count attempts: the run keeps committing (now with judges
// deciding the disputes, the next test).
TEST(SimAttack, TwoWrongMeanOwnersOfSixDoNotStopTheRun) {
  const std::uint64_t seed = 600;
  test::print_seed(seed);
  Swarm swarm(attacked_swarm(seed, {{1, Behaviour::wrong_mean}, {4, Behaviour::wrong_mean}}, 6));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(2)));
  ASSERT_NE(swarm.tracker().core(), nullptr);
  EXPECT_GE(swarm.tracker().core()->snapshot().benched.size(), 1u) << "the liars were benched";
  EXPECT_GE(swarm.rounds_committed(), 20u) << test::replay_hint(seed, "SimAttack.*");
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  EXPECT_TRUE(finite_states(swarm));
}

// The same two liars, with disputes decided by evidence (proto/segment_judge.hpp): each dispute's
// judge, a third member of the attempt, recomputes the segment from its members' signed
// contributions and finds the honest checker's mean. Each liar is benched by a verdict, on the
// first lie a verdict decides, and no honest member is ever benched.
TEST(SimAttack, TwoWrongMeanOwnersOfSixAreBenchedOnTheirFirstLie) {
  const std::uint64_t seed = 600;
  test::print_seed(seed);
  Swarm swarm(attacked_swarm(seed, {{1, Behaviour::wrong_mean}, {4, Behaviour::wrong_mean}}, 6));
  const std::set<proto::PeerKey> liars = {swarm.peer_key(1), swarm.peer_key(4)};
  std::map<proto::PeerKey, std::size_t> convicted;  // by a verdict
  std::size_t disputes = 0, counted = 0;
  swarm.watch_tracker([&](const proto::TrackerEvent& e) {
    if (e.text.find("signed different means") != std::string::npos) ++disputes;
    if (e.text.find("is counted") != std::string::npos) ++counted;
    if (e.peer && e.text.find("recomputed segment") != std::string::npos) ++convicted[*e.peer];
  });
  swarm.start();
  ASSERT_TRUE(swarm.run_for(minutes(2)));
  for (const proto::PeerKey& liar : liars)
    EXPECT_GE(convicted[liar], 1u) << "each liar is convicted by a verdict";
  EXPECT_EQ(convicted.size(), 2u) << "and only the liars";
  EXPECT_EQ(counted, 0u) << "every dispute decided by its judge";
  const proto::TrackerCore* tracker = swarm.tracker().core();
  ASSERT_NE(tracker, nullptr);
  for (const proto::BenchedKey& b : tracker->snapshot().benched)
    EXPECT_TRUE(liars.contains(b.key)) << "an honest member benched";
  // Each liar's first bench is its first verdict: it lied before, but nobody was benched then.
  for (const proto::BenchedKey& b : tracker->snapshot().benched)
    EXPECT_EQ(b.times, convicted[b.key]) << "one bench a verdict";
  EXPECT_GE(disputes, 2u);
  std::size_t verdicts = 0;
  for (const auto& [key, n] : convicted) verdicts += n;
  RecordProperty("disputes", static_cast<int>(disputes));
  RecordProperty("verdicts", static_cast<int>(verdicts));
  RecordProperty("rounds", static_cast<int>(swarm.rounds_committed()));
  EXPECT_GE(swarm.rounds_committed(), 20u) << test::replay_hint(seed, "SimAttack.*");
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
  EXPECT_TRUE(finite_states(swarm));
}

// Two colluding members (docs/SECURITY.md, "Liveness"): one returns its segment's mean negated
// where its checker is honest, the other signs a wrong result for the segment it checks, so an
// honest member between them can be disputed by both in one attempt. And silent members, live but
// never ready, two of eight. Neither stops the run.
// Chunks of 16 values: every member owns and checks a segment of the 256.
TEST(SimAttack, TwoColludingDisputersOrTwoSilentMembersDoNotStopTheRun) {
  EXPECT_GE(
      expect_the_run_survives({{2, Behaviour::wrong_mean}, {6, Behaviour::disputer}}, 450, 16), 2u);
  EXPECT_GE(expect_the_run_survives({{2, Behaviour::disputer}, {3, Behaviour::disputer}}, 451, 16),
            2u);
  expect_the_run_survives({{2, Behaviour::silent}, {6, Behaviour::silent}}, 452, 16);
}

TEST(SimAttack, BehavioursHaveNames) {
  for (const char* n :
       {"honest", "scaled", "sign-flipped", "random", "stale", "zero-then-huge", "accuser",
        "wrong-mean", "relay-dropper", "one-segment", "disputer", "silent"})
    EXPECT_EQ(name(parse_behaviour(n)), n);
  EXPECT_THROW(parse_behaviour("nice"), Error);
}

}  // namespace
}  // namespace loco::sim
