// The training loop every driver runs (step_loop.hpp): the hooks see each step where its doc says,
// the loop stops at its last step or on a stop flag, and the strategy lands its round at the end.
#include "loco/train/step_loop.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/tiny_train_config.hpp"
#include "loco/train/corpus.hpp"

namespace loco::train {
namespace {

// A strategy that writes down what the loop asked of it, and in which order.
class RecordingStrategy final : public Strategy {
 public:
  explicit RecordingStrategy(std::vector<std::string>& calls, bool steps_itself = false)
      : calls_(calls), steps_itself_(steps_itself) {}
  void begin(InnerLoop&, Start) override {}
  bool on_gradients(InnerLoop& loop) override {
    calls_.push_back("gradients " + std::to_string(loop.steps()));
    return !steps_itself_;
  }
  void after_step(InnerLoop& loop) override {
    calls_.push_back("after_step " + std::to_string(loop.steps()));
  }
  void finish(InnerLoop& loop) override {
    calls_.push_back("finish " + std::to_string(loop.steps()));
  }
  SharedState& shared() override { return none_; }

 private:
  std::vector<std::string>& calls_;
  bool steps_itself_;
  SharedState none_;
};

TEST(StepLoop, RunsTheHooksAroundTheStrategysAfterStepAndFinishesAtTheLastStep) {
  const TrainConfig config = test::tiny_train_config(0, 1, 1, 2);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  std::vector<std::string> calls;
  RecordingStrategy strategy(calls);
  std::vector<StepOutcome> done;
  run_steps(
      loop, strategy, [&] { return loop.steps() < 2; }, nullptr,
      StepHooks{
          .computed =
              [&](const StepOutcome& s) { calls.push_back("computed " + std::to_string(s.step)); },
          .done =
              [&](const StepOutcome& s) {
                calls.push_back("done " + std::to_string(s.step));
                done.push_back(s);
              }});
  const std::vector<std::string> expected = {"gradients 0",  "computed 1",  "after_step 1",
                                             "done 1",       "gradients 1", "computed 2",
                                             "after_step 2", "done 2",      "finish 2"};
  EXPECT_EQ(calls, expected);
  ASSERT_EQ(done.size(), 2u);
  for (const StepOutcome& s : done) {
    EXPECT_GT(s.loss, 0.0f);
    EXPECT_GT(s.grad_norm, 0.0f) << "AdamW stepped: its norm is reported";
    EXPECT_GT(s.learning_rate, 0.0f);
  }
  EXPECT_EQ(loop.steps(), 2u);
}

TEST(StepLoop, AStrategyThatStepsItselfGetsNoAdamWStepAndAStopFlagEndsTheLoop) {
  const TrainConfig config = test::tiny_train_config(0, 1, 1, 2);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  std::vector<std::string> calls;
  RecordingStrategy strategy(calls, /*steps_itself=*/true);
  const StepOutcome s = train_step(loop, strategy);
  EXPECT_EQ(s.grad_norm, 0.0f);
  EXPECT_EQ(loop.steps(), 0u) << "no optimizer step, so the loop did not count one";

  std::atomic<bool> stop{true};
  calls.clear();
  run_steps(
      loop, strategy, [] { return true; }, &stop);
  EXPECT_EQ(calls, std::vector<std::string>{"finish 0"});
}

// The simulator advances its compute thread's virtual clock in `before` (round/peer_session.hpp):
// it runs once a step, before the step's forward pass, and not after the last step.
TEST(StepLoop, TheBeforeHookRunsOnceAStepBeforeItsCompute) {
  const TrainConfig config = test::tiny_train_config(0, 1, 1, 2);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  std::vector<std::string> calls;
  RecordingStrategy strategy(calls);
  run_steps(
      loop, strategy, [&] { return loop.steps() < 2; }, nullptr,
      StepHooks{.before = [&] { calls.push_back("before " + std::to_string(loop.steps())); }});
  const std::vector<std::string> expected = {"before 0", "gradients 0", "after_step 1",
                                             "before 1", "gradients 1", "after_step 2",
                                             "finish 2"};
  EXPECT_EQ(calls, expected);
}

TEST(InnerLoop, AllocatesAdamWsMomentsOnlyForStrategiesThatStepWithAdamW) {
  TrainConfig config = test::tiny_train_config(0, 1, 1, 2);
  const Corpus corpus(config.data, 16);
  config.strategy.kind = "diloco";
  EXPECT_TRUE(InnerLoop(config, corpus).has_optimizer());
  config.strategy.kind = "demo";
  EXPECT_FALSE(InnerLoop(config, corpus).has_optimizer());
}

}  // namespace
}  // namespace loco::train
