// Where a run ends (train/run_end.hpp): the round a peer's shared state is at after train.steps
// steps when every round commits, for each strategy.

#include "loco/train/run_end.hpp"

#include <gtest/gtest.h>

namespace loco::train {
namespace {

TrainConfig run(const std::string& kind, std::uint64_t steps, std::uint64_t h) {
  TrainConfig c;
  c.train.steps = steps;
  c.strategy.kind = kind;
  c.strategy.diloco_h = h;
  return c;
}

TEST(RunEnd, DiLoCoEndsAtTheLastWholeRoundOfItsSteps) {
  EXPECT_EQ(final_round(run("diloco", 240, 4)), 60u);
  EXPECT_EQ(final_round(run("diloco", 243, 4)), 60u);  // the last 3 steps are local
  EXPECT_EQ(final_round(run("diloco", 3, 4)), 0u);     // never a round
}

TEST(RunEnd, DDPAndDeMoHaveARoundAStep) {
  EXPECT_EQ(final_round(run("ddp", 77, 4)), 77u);
  EXPECT_EQ(final_round(run("demo", 12, 4)), 12u);
}

TEST(RunEnd, GossipAndLocalRunsDeclareNoEnd) {
  TrainConfig gossip = run("diloco", 240, 4);
  gossip.strategy.gossip_group = 2;
  EXPECT_EQ(final_round(gossip), 0u);
  EXPECT_EQ(final_round(run("none", 240, 4)), 0u);
}

TEST(RunEnd, StreamingEndsAtTheLastRoundThatLandsByTheLastStep) {
  // H = 10, P = 2, τ = 3 (the schedule Streaming.SendsAtTpLandsTauLater... records): fragment 0
  // leaves after steps 5, 15 and lands after 8, 18; fragment 1 leaves after 10, 20 and lands
  // after 13, 23. By step 20, rounds 1-3 landed; round 4 is still on the wire.
  TrainConfig c = run("streaming", 20, 10);
  c.strategy.fragments = 2;
  c.strategy.tau = 3;
  EXPECT_EQ(final_round(c), 3u);
  c.train.steps = 23;
  EXPECT_EQ(final_round(c), 4u);
  c.train.steps = 7;
  EXPECT_EQ(final_round(c), 0u);
  // Eager rounds land at the fragment's next send, a whole H later.
  c.strategy.eager = "overlapped";
  c.strategy.fragments = 1;
  c.strategy.tau = 0;
  c.train.steps = 20;
  EXPECT_EQ(final_round(c), 1u);  // round 1 leaves after 10 and lands after 20
}

// A member trains train.steps steps, and on past them while it holds a round before the run's
// final round (rounds it gave up keep their numbers): its last step follows the run's final
// round, the tracker's, not its own count (issue 49).
TEST(RunEnd, AMemberBehindTheFinalRoundAtItsLastStepTrainsOnToIt) {
  const TrainConfig c = run("streaming", 20, 10);
  EXPECT_TRUE(more_to_train(c, 19, 2, 0, 3));
  EXPECT_FALSE(more_to_train(c, 20, 3, 0, 3)) << "its steps done, at the final round";
  EXPECT_TRUE(more_to_train(c, 20, 2, 0, 3)) << "a round given up: behind the final round";
  EXPECT_TRUE(more_to_train(c, 27, 2, 0, 3));
  EXPECT_TRUE(more_to_train(c, 20, 2, 3, 3)) << "Streaming's round on the wire is not held";
  const TrainConfig diloco = run("diloco", 30, 10);
  EXPECT_FALSE(more_to_train(diloco, 30, 2, 3, 3)) << "DiLoCo's round begun lands in finish()";
  EXPECT_TRUE(more_to_train(diloco, 30, 1, 2, 3));
  EXPECT_FALSE(more_to_train(c, 20, 2, 0, 0)) << "no final round announced: its steps";
  EXPECT_TRUE(more_to_train(c, 10, 3, 0, 3)) << "the steps after the final round are local";
}

}  // namespace
}  // namespace loco::train
