// DiLoCo's maths and its rounds: the outer Nesterov step against a double-precision reference
// with the sign of docs/DESIGN.md §1.1, one round of a group of one against a hand computation, and
// M workers in one process holding bit-identical shared state after every round while the loss
// falls.

#include "loco/train/diloco.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "../support/tiny_train_config.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/model.hpp"
#include "loco/optim/outer_nesterov.hpp"
#include "loco/train/local_groups.hpp"

namespace loco::train {
namespace {

// θ, v and Δ of `n` values drawn from `seed`, at the scales of a run.
struct OuterInputs {
  std::vector<float> theta, v, delta;
};
OuterInputs outer_inputs(std::uint64_t seed, std::size_t n) {
  Rng rng(seed);
  OuterInputs in{.theta = std::vector<float>(n), .v = std::vector<float>(n), .delta = {}};
  in.delta.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    in.theta[i] = rng.normal();
    in.v[i] = rng.normal() * 0.1f;
    in.delta[i] = rng.normal() * 0.01f;
  }
  return in;
}

TEST(OuterNesterov, MatchesTheFormulaAndItsSign) {
  const optim::OuterNesterovConfig config{.lr = 0.7f, .momentum = 0.9f};
  auto [theta, v, delta] = outer_inputs(1, 257);
  std::vector<double> ref_theta(theta.begin(), theta.end()), ref_v(v.begin(), v.end());
  for (int step = 0; step < 3; ++step) {
    optim::outer_nesterov_step(config, theta, v, delta);
    for (std::size_t i = 0; i < theta.size(); ++i) {
      ref_v[i] = 0.9 * ref_v[i] + delta[i];
      ref_theta[i] = ref_theta[i] - 0.7 * (delta[i] + 0.9 * ref_v[i]);
    }
  }
  for (std::size_t i = 0; i < theta.size(); ++i) {
    EXPECT_NEAR(theta[i], ref_theta[i], 1e-5);
    EXPECT_NEAR(v[i], ref_v[i], 1e-6);
  }
  // A positive pseudo-gradient (old − new > 0: the inner steps moved θ down) moves θ down.
  std::vector<float> t = {1.0f}, m = {0.0f};
  const std::vector<float> d = {0.5f};
  optim::outer_nesterov_step(config, t, m, d);
  EXPECT_FLOAT_EQ(t[0], 1.0f - 0.7f * (0.5f + 0.9f * 0.5f));
  EXPECT_FLOAT_EQ(m[0], 0.5f);
}

// The preview and the tentative state read θ, v and write elsewhere (outer_nesterov_step_to): the
// members install in place, so both must give the same bits, output by output.
TEST(OuterNesterov, OutOfPlaceGivesTheInPlaceBits) {
  const optim::OuterNesterovConfig config{.lr = 0.7f, .momentum = 0.9f};
  auto [theta, v, delta] = outer_inputs(2, 1031);
  std::vector<float> theta_out(theta.size(), -1.0f), v_out(theta.size(), -1.0f);
  std::vector<float> theta_only(theta.size(), -1.0f), v_only(theta.size(), -1.0f);
  optim::outer_nesterov_step_to(config, theta, v, delta, theta_out, v_out);
  optim::outer_nesterov_step_to(config, theta, v, delta, theta_only, {});
  optim::outer_nesterov_step_to(config, theta, v, delta, {}, v_only);
  optim::outer_nesterov_step(config, theta, v, delta);
  EXPECT_EQ(theta_out, theta);
  EXPECT_EQ(v_out, v);
  EXPECT_EQ(theta_only, theta);
  EXPECT_EQ(v_only, v);
}

TrainConfig diloco_run(std::uint64_t seed_shard, std::uint32_t shards) {
  TrainConfig c = test::tiny_train_config(static_cast<std::uint32_t>(seed_shard), shards,
                                          /*n_layer=*/1, /*batch=*/8);
  c.strategy.kind = "diloco";
  c.strategy.diloco_h = 10;
  return c;
}

TEST(DiLoCo, AnUnknownAllReduceIsAConfigErrorNamingTheChoices) {
  TrainConfig config = diloco_run(0, 1);
  for (const char* known : {"direct", "ring"}) {
    config.strategy.all_reduce = known;
    EXPECT_NO_THROW(config.validate()) << known;
  }
  config.strategy.all_reduce = "star";
  try {
    config.validate();
    FAIL() << "an unknown all-reduce was accepted";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("strategy.all-reduce: unknown all-reduce 'star': choose \"direct\" "
                               "or \"ring\""),
              std::string::npos)
        << e.message();
  }
}

TEST(DiLoCo, OneRoundAloneIsTheOuterStepOfTheInnerSteps) {
  const TrainConfig config = diloco_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  SoloGroup alone;
  DiLoCo diloco({.inner_steps = 10, .outer = config.strategy.outer}, loop.layout(), alone);
  diloco.begin(loop, Start::fresh);
  const Arena start = loop.params();
  for (int i = 0; i < 10; ++i) {
    loop.forward_backward();
    loop.optimizer_step();
  }
  const Arena end = loop.params();
  diloco.after_step(loop);  // step 10: the round
  EXPECT_EQ(diloco.shared().round(), 1u);
  // With v = 0: v' = Δ and θ' = θ − η(Δ + μΔ), Δ = θ_start − θ_end.
  const auto theta = diloco.shared().arena(0).data();
  for (std::size_t i = 0; i < theta.size(); i += 97) {
    const float delta = start.data()[i] - end.data()[i];
    EXPECT_FLOAT_EQ(theta[i], start.data()[i] - 0.7f * (delta + 0.9f * delta)) << i;
    EXPECT_EQ(loop.params().data()[i], theta[i]) << "the local copy restarts from θ";
  }
}

// A group that keeps the manifest each round's tentative gives, then installs it at once.
class ManifestRecordingGroup final : public OuterGroup {
 public:
  RoundResult run_round(const RoundInput& input) override {
    manifests.push_back(input.tentative(input.delta));
    input.install();
    return RoundResult{.kind = RoundResult::Kind::committed, .members = 1};
  }
  std::vector<proto::StateManifest> manifests;
};

// DiLoCo hashes the state a round leads to without holding it (block by block) and applies the
// step in place on install: what it reported must be what it then holds, bit for bit.
TEST(DiLoCo, TheManifestARoundReportsIsTheStateItInstalls) {
  const TrainConfig config = diloco_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  ManifestRecordingGroup group;
  DiLoCo diloco({.inner_steps = 2, .outer = config.strategy.outer}, loop.layout(), group);
  diloco.begin(loop, Start::fresh);
  for (int round = 1; round <= 3; ++round) {  // from the second, v is not zero
    for (int i = 0; i < 2; ++i) {
      loop.forward_backward();
      loop.optimizer_step();
      diloco.after_step(loop);
    }
    ASSERT_EQ(group.manifests.size(), static_cast<std::size_t>(round));
    EXPECT_EQ(group.manifests.back(), diloco.shared().manifest()) << "round " << round;
  }
}

TEST(DiLoCo, WorkersOfAGroupHoldTheSameStateAfterEveryRoundAndLearn) {
  constexpr std::size_t kWorkers = 3;
  model::set_compute_threads(1);  // one thread per worker: OpenMP teams would oversubscribe
  ThreadGroup group(kWorkers);
  std::vector<std::vector<Digest>> hashes(kWorkers);
  std::vector<float> first_loss(kWorkers), last_loss(kWorkers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      const TrainConfig config = diloco_run(w, kWorkers);
      const Corpus corpus(config.data, 16);
      InnerLoop loop(config, corpus);
      DiLoCo diloco({.inner_steps = 10, .outer = config.strategy.outer}, loop.layout(),
                    group.member(w));
      diloco.begin(loop, Start::fresh);
      first_loss[w] = loop.evaluate();
      while (loop.steps() < config.train.steps) {
        loop.forward_backward();
        loop.optimizer_step();
        diloco.after_step(loop);
        if (loop.steps() % 10 == 0) hashes[w].push_back(diloco.shared().hash());
      }
      last_loss[w] = loop.evaluate();
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(hashes[0].size(), 6u);
  for (std::size_t w = 1; w < kWorkers; ++w) EXPECT_EQ(hashes[w], hashes[0]) << "worker " << w;
  for (std::size_t w = 0; w < kWorkers; ++w)
    EXPECT_LT(last_loss[w], 0.8f * first_loss[w]) << "worker " << w;
}

}  // namespace
}  // namespace loco::train
