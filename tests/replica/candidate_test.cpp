// A replica's decisions (replica/candidate.hpp) and its fenced saves (replica/fenced_state.hpp)
// in virtual time, over the simulator's store (sim/store_model.hpp): who leads, when a leader is
// deposed (its lease gone, its key gone, the store silent for a whole lease) and when it is not
// (silent for less), and a deposed leader's save refused. tests/tracker/replica_test.cpp runs the
// same driver against a real etcd.

#include "loco/replica/candidate.hpp"

#include <gtest/gtest.h>

#include "loco/replica/commit_log.hpp"
#include "loco/replica/fenced_state.hpp"
#include "loco/sim/store_model.hpp"

namespace loco::replica {
namespace {

using Look = Candidate::Look;
using Standing = Election::Standing;

struct World {
  sim::EventLoop loop;
  sim::StoreModel store{loop};
  std::vector<std::unique_ptr<KvStore>> clients;
  std::vector<std::unique_ptr<Candidate>> candidates;

  Candidate& add(const std::string& name) {
    clients.push_back(store.client(clients.size()));
    candidates.push_back(std::make_unique<Candidate>(
        *clients.back(),
        CandidateConfig{.prefix = "/loco/run/", .name = name, .lease = std::chrono::seconds(3)}));
    return *candidates.back();
  }
  TimePoint now() const { return loop.now(); }
  void advance(Duration d) { ASSERT_TRUE(loop.run_until(loop.now() + d, 1'000'000)); }
};

proto::TrackerSnapshot state_at(std::uint64_t round) {
  proto::TrackerSnapshot s;
  s.run_id = "run";
  s.committed_round = round;
  s.committed_hash[0] = static_cast<std::uint8_t>(round);
  return s;
}

TEST(Candidate, TheFirstLeadsTheNextFollowsAndTakesOverWhenItsLeaseIsGone) {
  World w;
  Candidate& a = w.add("a");
  Candidate& b = w.add("b");
  ASSERT_EQ(a.follow(w.now()), Standing::leading);
  ASSERT_EQ(b.follow(w.now()), Standing::waiting);
  EXPECT_EQ(b.election().leader()->value, "a");
  // Each look also lists every candidate, oldest (the leader) first: the status page's replicas.
  ASSERT_EQ(a.follow(w.now()), Standing::leading);
  EXPECT_EQ(a.election().candidates(), (std::vector<Leader>{{"a", a.term()}, {"b", b.term()}}));
  FencedState a_state(*w.clients[0], a.election(), "/loco/run/");
  ASSERT_EQ(a_state.save(state_at(1)), FencedState::Saved::saved);

  // Both look every poll period; a keeps its lease and leads, b waits.
  for (int i = 0; i < 40; ++i) {
    w.advance(Candidate::kPollPeriod);
    ASSERT_EQ(a.lead(w.now()), Look::leading);
    ASSERT_EQ(b.follow(w.now()), Standing::waiting);
  }
  // a stops looking (paused): b leads once a's lease is gone, not before.
  const TimePoint paused_at = w.now();
  TimePoint leading_at{};
  for (int i = 0; i < 40 && leading_at == TimePoint{}; ++i) {
    w.advance(Candidate::kPollPeriod);
    if (b.follow(w.now()) == Standing::leading) leading_at = w.now();
  }
  ASSERT_NE(leading_at, TimePoint{});
  // The lease was refreshed at most a third of it before the pause; b looks every period.
  EXPECT_GE(leading_at - paused_at, std::chrono::seconds(2));
  EXPECT_LE(leading_at - paused_at, std::chrono::seconds(3) + Candidate::kPollPeriod);
  EXPECT_GT(b.term(), a.term());
  // a resumes: its save is refused before it looks, then its look says why.
  EXPECT_EQ(a_state.save(state_at(2)), FencedState::Saved::deposed);
  EXPECT_EQ(a.lead(w.now()), Look::lease_expired);
  FencedState b_state(*w.clients[1], b.election(), "/loco/run/");
  EXPECT_EQ(b_state.load(), state_at(1));
  ASSERT_EQ(b_state.save(state_at(2)), FencedState::Saved::saved);
  // a follows again, under a fresh lease.
  EXPECT_EQ(a.follow(w.now()), Standing::lost);
  EXPECT_EQ(a.follow(w.now()), Standing::waiting);
  EXPECT_EQ(a.election().leader()->value, "b");
  EXPECT_EQ(a.election().candidates(), (std::vector<Leader>{{"b", b.term()}, {"a", a.term()}}));
}

TEST(Candidate, ALeaderUnansweredForLessThanALeaseLeadsOnAndIsDeposedAfterAWholeOne) {
  World w;
  Candidate& a = w.add("a");
  ASSERT_EQ(a.follow(w.now()), Standing::leading);
  w.store.set_cut(0, true);
  Look look = Look::leading;
  Duration cut_for{0};
  while (look != Look::unreachable) {
    w.advance(Candidate::kPollPeriod);
    cut_for += Candidate::kPollPeriod;
    look = a.lead(w.now());
    ASSERT_TRUE(look == Look::unanswered || look == Look::unreachable);
    ASSERT_LE(cut_for, std::chrono::seconds(4));
  }
  // A whole lease since its last refresh, which was at most a third of a lease before the cut.
  EXPECT_GE(cut_for, std::chrono::seconds(2));
  EXPECT_FALSE(a.error().empty());
}

TEST(Candidate, AResignedLeaderHandsOverAtTheNextLookAndItsKeyRevokedDeposesIt) {
  World w;
  Candidate& a = w.add("a");
  Candidate& b = w.add("b");
  Candidate& c = w.add("c");
  ASSERT_EQ(a.follow(w.now()), Standing::leading);
  ASSERT_EQ(b.follow(w.now()), Standing::waiting);
  ASSERT_EQ(c.follow(w.now()), Standing::waiting);
  EXPECT_TRUE(a.resign());
  EXPECT_EQ(b.follow(w.now()), Standing::leading);
  EXPECT_EQ(c.follow(w.now()), Standing::waiting);
  // b's key deleted behind its back (an operator's etcdctl del): b is deposed at its next look.
  const auto keys = w.store.peek({.key = "/loco/run/leader/",
                                  .range_end = prefix_end("/loco/run/leader/"),
                                  .limit = 1,
                                  .oldest_first = true});
  w.store.txn({.compare = {}, .success = {delete_key(keys.kvs.at(0).key)}, .failure = {}});
  EXPECT_EQ(b.lead(w.now()), Look::key_gone);
  EXPECT_EQ(c.follow(w.now()), Standing::leading);
}

}  // namespace
}  // namespace loco::replica
