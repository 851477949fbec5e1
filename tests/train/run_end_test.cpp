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

}  // namespace
}  // namespace loco::train
