// DeMo (docs/DESIGN.md §1.4): one step of the maths against a dense computation with the DCT basis
// built here from its definition; the message decoder against malformed input; M = 4 workers in
// one process hold the same state after every step and learn.

#include "loco/train/demo.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <optional>

#include "../support/tiny_train_config.hpp"
#include "gather_workers.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/all_gather.hpp"
#include "loco/secure/identity.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/make_demo.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_settings.hpp"
#include "tensor_message_refusals.hpp"

namespace loco::train {
namespace {

using Matrix = std::vector<std::vector<double>>;

// D_n[k][j] = s_k cos(π (2j + 1) k / 2n), s_0 = √(1/n), s_k = √(2/n).
Matrix dct_basis(std::size_t n) {
  Matrix d(n, std::vector<double>(n));
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t j = 0; j < n; ++j)
      d[k][j] = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n)) *
                std::cos(std::numbers::pi * static_cast<double>((2 * j + 1) * k) /
                         static_cast<double>(2 * n));
  return d;
}

// What one member's message decodes to, computed densely: for each cr×cc chunk X of the
// rows×cols tensor, C = D_r X D_cᵀ, keep the k largest |C| (ties to the lower row-major index),
// return D_rᵀ C_kept D_c in X's place.
std::vector<double> dense_transmitted(const std::vector<double>& x, std::size_t rows,
                                      std::size_t cols, std::size_t cr, std::size_t cc,
                                      std::size_t k) {
  const Matrix dr = dct_basis(cr), dc = dct_basis(cc);
  std::vector<double> out(x.size(), 0.0);
  for (std::size_t r0 = 0; r0 < rows; r0 += cr) {
    for (std::size_t c0 = 0; c0 < cols; c0 += cc) {
      std::vector<double> coef(cr * cc, 0.0);
      for (std::size_t a = 0; a < cr; ++a)
        for (std::size_t b = 0; b < cc; ++b)
          for (std::size_t i = 0; i < cr; ++i)
            for (std::size_t j = 0; j < cc; ++j)
              coef[a * cc + b] += dr[a][i] * x[(r0 + i) * cols + c0 + j] * dc[b][j];
      std::vector<std::size_t> order(cr * cc);
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
        return std::fabs(coef[p]) > std::fabs(coef[q]);
      });
      std::vector<double> kept(cr * cc, 0.0);
      for (std::size_t i = 0; i < k; ++i) kept[order[i]] = coef[order[i]];
      for (std::size_t i = 0; i < cr; ++i)
        for (std::size_t j = 0; j < cc; ++j)
          for (std::size_t a = 0; a < cr; ++a)
            for (std::size_t b = 0; b < cc; ++b)
              out[(r0 + i) * cols + c0 + j] += dr[a][i] * kept[a * cc + b] * dc[b][j];
    }
  }
  return out;
}

float wave(std::size_t i, std::uint64_t seed) {
  return static_cast<float>(
      std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(seed)) +
      0.1 * std::cos(3.1 * static_cast<double>(i * seed)));
}

// A 4×6 matrix (chunks of 2×3 for a target of 3) and a 6-vector (chunks of 3), two members with
// their own gradients and momenta, k = 2, values in fp32: δ, the update direction and θ after one
// step, against the dense formulas of demo_components.hpp.
TEST(DeMo, OneStepMatchesADenseComputationWithAnExplicitDctBasis) {
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {4, 6}}, {"b", {6}}});
  const DemoConfig config{
      .chunk = 3, .topk = 2, .beta = 0.9f, .values = "fp32", .weight_decay = 0.1f};
  const float lr = 0.01f;
  DemoComponents components(layout, config);
  Arena params(layout), direction(layout);
  std::vector<Arena> momenta(2, Arena(layout)), grads(2, Arena(layout)), sent(2, Arena(layout));
  for (std::size_t t = 0; t < 2; ++t) {
    for (std::size_t i = 0; i < params.tensor(t).size(); ++i) {
      params.tensor(t)[i] = wave(i + 10 * t, 7);
      for (std::size_t m = 0; m < 2; ++m) {
        momenta[m].tensor(t)[i] = 0.01f * wave(i + 10 * t, 3 + m);
        grads[m].tensor(t)[i] = wave(i + 10 * t, 5 + m);
      }
    }
  }
  const Arena params_before = params;
  const std::vector<Arena> momenta_before = momenta;

  std::vector<std::vector<std::byte>> parts;
  for (std::size_t m = 0; m < 2; ++m) {
    parts.push_back(components.contribute(momenta[m], grads[m], lr, sent[m]));
    DemoComponents::forget(momenta[m], sent[m]);
  }
  EXPECT_EQ(components.direction(parts, direction), 2u);
  apply_demo_update(params, direction, lr, config.weight_decay);

  struct Shape {
    std::size_t rows, cols, cr, cc;
  };
  const Shape shapes[] = {{4, 6, 2, 3}, {1, 6, 1, 3}};
  for (std::size_t t = 0; t < 2; ++t) {
    const Shape& s = shapes[t];
    std::vector<double> mean(s.rows * s.cols, 0.0);
    for (std::size_t m = 0; m < 2; ++m) {
      std::vector<double> delta(mean.size());
      for (std::size_t i = 0; i < delta.size(); ++i)
        delta[i] = 0.9 * momenta_before[m].tensor(t)[i] + lr * grads[m].tensor(t)[i];
      const std::vector<double> q = dense_transmitted(delta, s.rows, s.cols, s.cr, s.cc, 2);
      for (std::size_t i = 0; i < delta.size(); ++i) {
        EXPECT_NEAR(momenta[m].tensor(t)[i], delta[i] - q[i], 1e-6) << t << " " << m << " " << i;
        mean[i] += q[i] / 2.0;
      }
    }
    const double keep = t == 0 ? 1.0 - lr * 0.1 : 1.0;  // decay on matrices only
    std::size_t decided = 0;
    for (std::size_t i = 0; i < mean.size(); ++i) {
      if (std::fabs(mean[i]) < 1e-6) continue;  // a sign float rounding may flip
      ++decided;
      const double sign = mean[i] > 0 ? 1.0 : -1.0;
      EXPECT_EQ(direction.tensor(t)[i], static_cast<float>(sign)) << t << " " << i;
      EXPECT_NEAR(params.tensor(t)[i], params_before.tensor(t)[i] * keep - lr * sign, 1e-6);
    }
    EXPECT_GE(decided, mean.size() / 2) << "most of the direction is checked";
  }
}

TEST(DeMo, AMalformedMessageIsRefusedAndLeftOutOfTheMean) {
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {4, 8}}, {"b", {8}}});
  DemoComponents components(layout, DemoConfig{.chunk = 4, .topk = 3});
  Arena momentum(layout), grads(layout), sent(layout), out(layout);
  for (std::size_t i = 0; i < grads.tensor(0).size(); ++i) grads.tensor(0)[i] = wave(i, 2);
  for (std::size_t i = 0; i < grads.tensor(1).size(); ++i) grads.tensor(1)[i] = wave(i, 4);
  const std::vector<std::byte> good = components.contribute(momentum, grads, 0.1f, sent);
  components.decode(good, out);
  EXPECT_EQ(blake2b(out), blake2b(sent));

  const std::vector<std::byte> bad = test::expect_malformed_refused(
      [&](const std::vector<std::byte>& m) { components.decode(m, out); }, good, 32,
      "DeMo components", "");

  // Every member holds the same parts, so a bad one is left out by all: the direction is the
  // good part's alone.
  Arena alone(layout);
  EXPECT_EQ(components.direction(std::vector<std::vector<std::byte>>{good}, alone), 1u);
  EXPECT_EQ(components.direction(std::vector<std::vector<std::byte>>{bad, good}, out), 1u);
  EXPECT_EQ(blake2b(out), blake2b(alone));
}

// The pieces together: three members' DeMo messages through the all-gather core (messages
// handed over in memory). Member 2 is silent; at the deadline the others fail naming it, and
// attempt 2 with the two survivors gives both the same parts, so the same direction bit for bit:
// the mean of the survivors' messages, in member order.
TEST(DeMo, ThroughTheAllGatherCoreTheSurvivorsOfAMissingMemberAgree) {
  using namespace std::chrono_literals;
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {8, 8}}, {"b", {8}}});
  DemoComponents components(layout, DemoConfig{.chunk = 4, .topk = 2});
  std::vector<std::vector<std::byte>> messages;
  for (std::uint64_t m = 0; m < 3; ++m) {
    Arena momentum(layout), grads(layout), sent(layout);
    for (std::size_t i = 0; i < grads.data().size(); ++i) grads.data()[i] = wave(i, m + 1);
    messages.push_back(components.contribute(momentum, grads, 0.1f, sent));
  }
  std::vector<proto::PeerKey> keys;
  for (std::uint8_t i = 1; i <= 3; ++i) {
    std::array<std::uint8_t, 32> seed{};
    seed[0] = i;
    keys.push_back(secure::KeyPair::from_seed(seed).public_key());
  }
  const TimePoint deadline = TimePoint(5s);
  // Runs one attempt among `members` (indices into keys/messages), `silent` sending nothing.
  auto attempt = [&](std::uint32_t number, const std::vector<std::size_t>& members,
                     std::optional<std::size_t> silent) {
    std::vector<proto::PeerKey> order;
    for (const std::size_t m : members) order.push_back(keys[m]);
    std::vector<std::unique_ptr<proto::AllGather>> nodes;
    for (std::size_t i = 0; i < members.size(); ++i)
      nodes.push_back(
          std::make_unique<proto::AllGather>(proto::AllGatherConfig{.round = 1,
                                                                    .attempt = number,
                                                                    .members = order,
                                                                    .self = i,
                                                                    .max_part_bytes = 1 << 16,
                                                                    .deadline = deadline},
                                             messages[members[i]]));
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (silent == i) continue;
      nodes[i]->start();
      while (auto t = nodes[i]->poll_transmit()) {
        const auto to = std::find(order.begin(), order.end(), t->to) - order.begin();
        nodes[static_cast<std::size_t>(to)]->on_message(order[i], t->body);
      }
    }
    for (auto& node : nodes) node->handle_timeout(deadline);
    return nodes;
  };
  const auto first = attempt(1, {0, 1, 2}, /*silent=*/2);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(first[i]->failure().has_value());
    EXPECT_EQ(first[i]->failure()->missing, std::vector<std::size_t>{2});
  }
  const auto retry = attempt(2, {0, 1}, std::nullopt);
  Arena expected(layout), got(layout);
  EXPECT_EQ(
      components.direction(std::vector<std::vector<std::byte>>{messages[0], messages[1]}, expected),
      2u);
  for (const auto& node : retry) {
    ASSERT_TRUE(node->done());
    EXPECT_EQ(components.direction(node->parts(), got), 2u);
    EXPECT_EQ(blake2b(got), blake2b(expected));
  }
}

TrainConfig tiny_demo(std::uint32_t shard, std::uint32_t shards) {
  TrainConfig c = test::tiny_train_config(shard, shards, /*n_layer=*/1, /*batch=*/4);
  c.strategy.kind = "demo";
  c.strategy.demo_chunk = 16;
  c.strategy.demo_topk = 8;
  return c;
}

TEST(DeMo, TheFactoryBuildsItWithAGatherGroupAndRefusesItWithout) {
  TrainConfig config = tiny_demo(0, 1);
  config.validate();
  EXPECT_EQ(describe_strategy(config),
            "demo beta=0.999 late=false codec=demo:chunk=16,topk=8,values=sign");
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  SoloGroup alone;
  SoloGather gather;
  EXPECT_NE(dynamic_cast<DeMo*>(make_strategy(config, loop, alone, nullptr, &gather).get()),
            nullptr);
  try {
    (void)make_strategy(config, loop, alone);
    ADD_FAILURE() << "demo without a gather group";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs an all-gather group"), std::string::npos)
        << e.what();
  }
  bool listed = false;
  for (const proto::Setting& s : run_settings(config)) listed |= s.name == "strategy.demo-topk";
  EXPECT_TRUE(listed) << "peers with other DeMo options are refused";
  EXPECT_NE(config.identity().find("strategy.demo-topk=8"), std::string::npos);

  config.strategy.demo_values = "nine";
  EXPECT_THROW(config.validate(), Error);
  config = tiny_demo(0, 1);
  config.strategy.codec = "int8:block=64";
  EXPECT_THROW(config.validate(), Error);
  config = tiny_demo(0, 1);
  config.strategy.demo_beta = 1.0f;
  EXPECT_THROW(config.validate(), Error);
}

// Four workers (gather_workers.hpp): the same state after every step and learning, each its own
// momentum, DeMo's own update in place of AdamW's step; with `late` too.
void four_workers_agree_and_learn(bool late) {
  constexpr std::uint32_t kWorkers = 4;
  constexpr std::uint64_t kSteps = 30;
  std::vector<TrainConfig> configs;
  for (std::uint32_t w = 0; w < kWorkers; ++w) {
    configs.push_back(tiny_demo(w, kWorkers));
    configs.back().strategy.demo_late = late;
  }
  test::GatherWorkers<DeMo> workers(std::move(configs));
  workers.run(kSteps, [](const TrainConfig& config, InnerLoop& loop, GatherGroup& member) {
    return std::make_unique<DeMo>(demo_config(config), loop.layout(), member);
  });
  workers.expect_agree_and_learn();
  for (std::uint32_t w = 0; w < kWorkers; ++w) {
    EXPECT_EQ(workers.loops[w]->steps(), kSteps);
    EXPECT_EQ(workers.optimizer_steps[w], 0u) << "DeMo's on_gradients does the update itself";
    if (w > 0) {
      EXPECT_NE(blake2b(workers.strategies[w]->momentum()),
                blake2b(workers.strategies[0]->momentum()))
          << "each worker's momentum is its own (worker " << w << ")";
    }
  }
}

TEST(DeMo, FourWorkersHoldTheSameStateAfterEveryStepAndLearn) {
  four_workers_agree_and_learn(false);
}

TEST(DeMo, FourWorkersApplyingOneStepLateAlsoAgreeAndLearn) {
  four_workers_agree_and_learn(true);
}

}  // namespace
}  // namespace loco::train
