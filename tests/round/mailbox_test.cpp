#include <gtest/gtest.h>

#include <chrono>

#include "loco/round/swarm_events.hpp"

namespace loco::round {
namespace {

SwarmEvent event(SwarmEvent::Kind kind, std::uint64_t round) {
  SwarmEvent e{.kind = kind};
  e.round = round;
  return e;
}

std::vector<std::pair<SwarmEvent::Kind, std::uint64_t>> drain(Mailbox& mailbox) {
  std::vector<std::pair<SwarmEvent::Kind, std::uint64_t>> out;
  while (auto e = mailbox.wait(std::chrono::milliseconds(0))) out.emplace_back(e->kind, e->round);
  return out;
}

TEST(Mailbox, EventsComeOutInTheOrderTheyWentIn) {
  Mailbox mailbox;
  mailbox.post(event(SwarmEvent::Kind::mean, 3));
  mailbox.post(event(SwarmEvent::Kind::committed, 3));
  mailbox.post(event(SwarmEvent::Kind::aborted, 4));
  EXPECT_EQ(drain(mailbox), (std::vector<std::pair<SwarmEvent::Kind, std::uint64_t>>{
                                {SwarmEvent::Kind::mean, 3},
                                {SwarmEvent::Kind::committed, 3},
                                {SwarmEvent::Kind::aborted, 4}}));
}

// A compute thread slower than the fetches would otherwise load every state in turn, report each
// (stale) one, and be told to fetch again behind them: a queue that never drains.
TEST(Mailbox, ANewerFetchedStateReplacesOneNotTakenYet) {
  Mailbox mailbox;
  mailbox.post(event(SwarmEvent::Kind::fetched, 540));
  mailbox.post(event(SwarmEvent::Kind::aborted, 541));
  mailbox.post(event(SwarmEvent::Kind::fetched, 1009));
  EXPECT_FALSE(mailbox.holds([](const SwarmEvent& e) { return e.round == 540; }));
  EXPECT_TRUE(mailbox.holds([](const SwarmEvent& e) { return e.round == 1009; }));
  EXPECT_EQ(drain(mailbox),
            (std::vector<std::pair<SwarmEvent::Kind, std::uint64_t>>{
                {SwarmEvent::Kind::aborted, 541}, {SwarmEvent::Kind::fetched, 1009}}));
}

// The run's end may come while a round's wait takes the events (it would drop it as another
// round's): it is kept apart, and stays for whoever asks after the last round.
TEST(Mailbox, TheRunsEndIsKeptApartFromTheQueueAndStays) {
  Mailbox mailbox;
  EXPECT_FALSE(mailbox.wait_run_ended(std::chrono::milliseconds(0)));
  mailbox.post(event(SwarmEvent::Kind::committed, 60));
  SwarmEvent ended = event(SwarmEvent::Kind::run_ended, 60);
  ended.kept = true;
  mailbox.post(ended);
  EXPECT_EQ(
      drain(mailbox),
      (std::vector<std::pair<SwarmEvent::Kind, std::uint64_t>>{{SwarmEvent::Kind::committed, 60}}));
  for (int i = 0; i < 2; ++i) {
    const auto got = mailbox.wait_run_ended(std::chrono::milliseconds(0));
    ASSERT_TRUE(got);
    EXPECT_EQ(got->round, 60u);
    EXPECT_TRUE(got->kept);
  }
}

}  // namespace
}  // namespace loco::round
