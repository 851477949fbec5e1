// DeMo's delayed apply over an OverlappedGather (overlapped_gather.hpp, the swarm's) against the
// blocking late DeMo: the overlapped strategy takes its gradients at the same points, so it holds
// the same states bit for bit, and an attempt whose tentative state was computed and then aborted
// leaves no trace. The group here runs the round when the strategy lands it (over a SoloGather):
// what is tested is the strategy's sequencing; the swarm's tests cover the threads.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "../support/tiny_train_config.hpp"
#include "loco/core/hash.hpp"
#include "loco/model/model.hpp"
#include "loco/train/demo.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/make_demo.hpp"

namespace loco::train {
namespace {

// start_gather keeps the round; land_gather first computes the tentative state of an attempt
// that "aborts" (this member's part twice), then runs the round through `group`.
class LandingGather final : public OverlappedGather {
 public:
  explicit LandingGather(GatherGroup& group) : group_(group) {}
  std::uint64_t landed() const { return landed_; }
  void start_gather(GatherStart input) override { started_ = std::move(input); }
  RoundResult land_gather(const std::function<void()>& install) override {
    GatherStart in = std::move(*started_);
    started_.reset();
    ++landed_;
    const std::vector<std::vector<std::byte>> aborted = {in.contribution, in.contribution};
    (void)in.tentative(aborted);
    return group_.run_gather(GatherInput{.round = in.round,
                                         .contribution = in.contribution,
                                         .tentative = in.tentative,
                                         .install = install});
  }

 private:
  GatherGroup& group_;
  std::optional<GatherStart> started_;
  std::uint64_t landed_ = 0;
};

struct LateRun {
  std::map<std::uint64_t, Digest> states;  // the shared state's hash at each round
  Digest params{};
  Digest momentum{};
  std::uint64_t steps = 0;
  std::uint64_t landed = 0;  // rounds that went through the overlapped group
};

LateRun run_late(bool overlapped, std::uint64_t steps) {
  model::set_compute_threads(1);
  TrainConfig config = test::tiny_train_config(0, 1, /*n_layer=*/1, /*batch=*/4);
  config.strategy.kind = "demo";
  config.strategy.demo_chunk = 16;
  config.strategy.demo_topk = 8;
  config.strategy.demo_late = true;
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  SoloGather solo;
  LandingGather landing(solo);
  DeMo demo(demo_config(config), loop.layout(), solo, overlapped ? &landing : nullptr);
  demo.begin(loop, Start::fresh);
  LateRun run;
  run.states[0] = demo.shared().hash();
  for (std::uint64_t s = 0; s < steps; ++s) {
    loop.forward_backward();
    EXPECT_FALSE(demo.on_gradients(loop));
    demo.after_step(loop);
    run.states[demo.shared().round()] = demo.shared().hash();
  }
  demo.finish(loop);
  run.states[demo.shared().round()] = demo.shared().hash();
  run.params = blake2b(loop.params());
  run.momentum = blake2b(demo.momentum());
  run.steps = loop.steps();
  run.landed = landing.landed();
  return run;
}

TEST(DeMoOverlapped, TheDelayedApplyOverlappedHoldsTheBlockingStatesBitForBit) {
  constexpr std::uint64_t kSteps = 12;
  const LateRun blocking = run_late(false, kSteps);
  const LateRun overlapped = run_late(true, kSteps);
  // Overlapped, the shared state is a round behind between steps: rounds 0 to 12 either way.
  ASSERT_EQ(blocking.states.size(), kSteps + 1);
  EXPECT_EQ(overlapped.states, blocking.states);
  EXPECT_EQ(overlapped.params, blocking.params);
  EXPECT_EQ(overlapped.momentum, blocking.momentum);
  EXPECT_EQ(overlapped.steps, kSteps);
  EXPECT_EQ(blocking.steps, kSteps);
  EXPECT_EQ(overlapped.landed, kSteps);
  EXPECT_EQ(blocking.landed, 0u);
}

}  // namespace
}  // namespace loco::train
