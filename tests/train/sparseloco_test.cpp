// SparseLoCo (docs/STRATEGIES.md): one round of the maths against a dense reference; the
// message decoder against malformed input; zstd on the wire, the same bits in fewer bytes; a lying
// member bounded by the clip; the row's checks, settings and identity; M = 4 workers in one process
// hold the same state after every round and learn.

#include "loco/train/sparseloco.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../support/tiny_train_config.hpp"
#include "gather_workers.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/make_sparseloco.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/run_settings.hpp"
#include "tensor_message_refusals.hpp"

namespace loco::train {
namespace {

using Parts = std::vector<std::vector<std::byte>>;

float wave(std::size_t i, std::uint64_t seed) {
  return static_cast<float>(
      std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(seed)) +
      0.1 * std::cos(3.1 * static_cast<double>(i * seed)));
}

std::shared_ptr<ArenaLayout> small_layout() {
  return std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {4, 8}}, {"b", {12}}});
}

void fill(Arena& a, std::uint64_t seed, float scale) {
  const ArenaLayout& layout = a.layout();
  for (std::size_t t = 0; t < layout.tensor_count(); ++t)
    for (std::size_t i = 0; i < a.tensor(t).size(); ++i)
      a.tensor(t)[i] = scale * wave(i + 10 * t, seed);
}

double norm(const Arena& a) {
  double s = 0;
  for (const float v : a.data()) s += static_cast<double>(v) * v;
  return std::sqrt(s);
}

// Two members, chunks of 16 (a 32-value matrix: 2 chunks; a 12-vector: 1), k = 8, 8-bit values
// with a scale per chunk: e ← βe + θ − θ_i; each chunk sends its 8 largest |e| (ties to the lower
// index) within int8's half a scale of that chunk, nothing else; e keeps exactly what was not sent;
// θ' = θ − lr·(mean of the sent parts, member order).
TEST(SparseLoCo, OneRoundMatchesADenseReference) {
  const auto layout = small_layout();
  const SparseLoCoConfig config{
      .beta = 0.9f, .chunk = 16, .topk = 8, .bits = 8, .outer_lr = 0.7f, .clip = 0.0f};
  SparseLoCoComponents components(layout, config);
  Arena theta(layout), mean(layout);
  fill(theta, 7, 1.0f);
  std::vector<Arena> errors(2, Arena(layout)), locals(2, Arena(layout)), sent(2, Arena(layout));
  Parts parts;
  for (std::size_t m = 0; m < 2; ++m) {
    fill(errors[m], 3 + m, 0.01f);
    fill(locals[m], 5 + m, 0.1f);
    for (std::size_t i = 0; i < theta.data().size(); ++i)
      locals[m].data()[i] = theta.data()[i] - locals[m].data()[i];  // θ_i = θ − a small step
    Arena accumulated = errors[m];
    for (std::size_t i = 0; i < theta.data().size(); ++i)
      accumulated.data()[i] = 0.9f * errors[m].data()[i] + (theta.data()[i] - locals[m].data()[i]);
    parts.push_back(components.contribute(errors[m], theta, locals[m], sent[m]));
    EXPECT_EQ(blake2b(errors[m]), blake2b(accumulated)) << "e ← βe + Δ, member " << m;
    for (std::size_t t = 0; t < 2; ++t) {
      const std::span<const float> e = accumulated.tensor(t);
      const std::span<const float> s = sent[m].tensor(t);
      for (std::size_t c0 = 0; c0 < e.size(); c0 += 16) {
        const std::size_t end = std::min(e.size(), c0 + 16);
        std::vector<std::size_t> order;
        for (std::size_t i = c0; i < end; ++i) order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          return std::fabs(e[a]) > std::fabs(e[b]);
        });
        const float scale = std::fabs(e[order[0]]) / 127.0f;
        for (std::size_t j = 0; j < order.size(); ++j) {
          const std::size_t i = order[j];
          if (j < 8) {
            EXPECT_NEAR(s[i], e[i], scale / 2 * 1.001f) << m << " " << t << " " << i;
          } else {
            EXPECT_EQ(s[i], 0.0f) << "not sent: " << m << " " << t << " " << i;
          }
        }
      }
    }
    SparseLoCoComponents::forget(errors[m], sent[m]);
    for (std::size_t i = 0; i < theta.data().size(); ++i)
      EXPECT_EQ(errors[m].data()[i], accumulated.data()[i] - sent[m].data()[i]);
  }
  EXPECT_EQ(components.aggregate(parts, mean), 2u);
  EXPECT_EQ(components.last_clipped(), 0u);
  Arena expected = theta;
  for (std::size_t i = 0; i < theta.data().size(); ++i) {
    const float u = ((0.0f + sent[0].data()[i]) + sent[1].data()[i]) / 2.0f;
    EXPECT_EQ(mean.data()[i], u) << i;
    expected.data()[i] = theta.data()[i] - 0.7f * u;
  }
  apply_sparseloco_update(theta, mean, 0.7f);
  EXPECT_EQ(blake2b(theta), blake2b(expected));
}

TEST(SparseLoCo, AMalformedMessageIsRefusedAndLeftOutOfTheMean) {
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {4, 8}}, {"b", {8}}});
  SparseLoCoComponents components(layout, SparseLoCoConfig{.chunk = 16, .topk = 8});
  Arena error(layout), theta(layout), local(layout), sent(layout), out(layout);
  fill(local, 2, 0.1f);
  const std::vector<std::byte> good = components.contribute(error, theta, local, sent);
  components.decode(good, out);
  EXPECT_EQ(blake2b(out), blake2b(sent));

  const std::vector<std::byte> bad = test::expect_malformed_refused(
      [&](const std::vector<std::byte>& m) { components.decode(m, out); }, good, 32,
      "SparseLoCo update", "chunktopk");

  // Every member holds the same parts, so a bad one is left out by all.
  Arena alone(layout);
  EXPECT_EQ(components.aggregate(Parts{good}, alone), 1u);
  EXPECT_EQ(components.aggregate(Parts{bad, good}, out), 1u);
  EXPECT_EQ(blake2b(out), blake2b(alone));
}

// sparseloco-zstd compresses each tensor's message without loss: the same e, the same sent values
// and the same mean to the bit, in fewer bytes (chunks of 64: an index's u16 has a zero high
// byte); a peer without the stage cannot read it (the level is a run setting).
TEST(SparseLoCo, ZstdSendsTheSameBitsInFewerBytes) {
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {64, 64}}, {"b", {64}}});
  const SparseLoCoConfig plain_config{.chunk = 64, .topk = 8};
  SparseLoCoConfig zstd_config = plain_config;
  zstd_config.zstd = 19;
  EXPECT_EQ(zstd_config.codec_spec(), "chunktopk:chunk=64,topk=8,values=int2+zstd:level=19");
  SparseLoCoComponents plain(layout, plain_config), zstd(layout, zstd_config);
  Arena theta(layout), local(layout);
  fill(local, 4, 0.1f);
  Arena plain_error(layout), zstd_error(layout), plain_sent(layout), zstd_sent(layout);
  fill(plain_error, 9, 0.01f);
  zstd_error.copy_from(plain_error);
  const std::vector<std::byte> small = zstd.contribute(zstd_error, theta, local, zstd_sent);
  const std::vector<std::byte> large = plain.contribute(plain_error, theta, local, plain_sent);
  EXPECT_EQ(blake2b(zstd_sent), blake2b(plain_sent));
  EXPECT_EQ(blake2b(zstd_error), blake2b(plain_error));
  EXPECT_LT(static_cast<double>(small.size()), 0.8 * static_cast<double>(large.size()))
      << small.size() << " against " << large.size();
  Arena plain_mean(layout), zstd_mean(layout), out(layout);
  EXPECT_EQ(plain.aggregate(Parts{large}, plain_mean), 1u);
  EXPECT_EQ(zstd.aggregate(Parts{small}, zstd_mean), 1u);
  EXPECT_EQ(blake2b(zstd_mean), blake2b(plain_mean));
  EXPECT_THROW(plain.decode(small, out), Error);
}

// Four members; the last lies with an update 1000 times an honest one's. With clip = 2 its
// message is scaled to 2 × the median norm, so it moves the mean by at most 2·m / 4 from the
// honest members' share; without the clip it moves it by its whole norm / 4.
TEST(SparseLoCo, ALiarMovesTheMeanByNoMoreThanTheClipAllows) {
  const auto layout =
      std::make_shared<ArenaLayout>(std::vector<TensorSpec>{{"w", {16, 16}}, {"b", {16}}});
  const SparseLoCoConfig clipped{.chunk = 32, .topk = 8, .clip = 2.0f};
  SparseLoCoConfig unclipped = clipped;
  unclipped.clip = 0.0f;
  SparseLoCoComponents components(layout, clipped), plain(layout, unclipped);
  Arena theta(layout);
  Parts parts;
  std::vector<double> honest_norms;
  Arena honest_sum(layout);
  for (std::uint64_t m = 0; m < 4; ++m) {
    Arena error(layout), local(layout), sent(layout);
    fill(local, 11 + m, m == 3 ? -100.0f : 0.1f);
    parts.push_back(components.contribute(error, theta, local, sent));
    if (m == 3) continue;
    honest_norms.push_back(norm(sent));
    for (std::size_t i = 0; i < sent.data().size(); ++i) honest_sum.data()[i] += sent.data()[i];
  }
  std::sort(honest_norms.begin(), honest_norms.end());
  // The four norms' lower median is the second honest one (the liar's is the largest).
  const double median = honest_norms[1];
  Arena mean(layout), unbounded(layout), deviation(layout);
  EXPECT_EQ(components.aggregate(parts, mean), 4u);
  EXPECT_EQ(components.last_clipped(), 1u);
  EXPECT_EQ(plain.aggregate(parts, unbounded), 4u);
  EXPECT_EQ(plain.last_clipped(), 0u);
  auto moved = [&](const Arena& u) {
    for (std::size_t i = 0; i < u.data().size(); ++i)
      deviation.data()[i] = u.data()[i] - honest_sum.data()[i] / 4.0f;
    return norm(deviation);
  };
  EXPECT_LE(moved(mean), 2.0 * median / 4.0 * 1.0001);
  EXPECT_GT(moved(mean), 2.0 * median / 4.0 * 0.999) << "the liar takes its whole allowance";
  EXPECT_GT(moved(unbounded), 100.0 * median) << "without the clip it is not bounded";
}

TrainConfig tiny_sparseloco(std::uint32_t shard, std::uint32_t shards) {
  TrainConfig c = test::tiny_train_config(shard, shards, /*n_layer=*/1, /*batch=*/4);
  c.strategy.kind = "sparseloco";
  c.strategy.diloco_h = 5;
  c.strategy.sparseloco_chunk = 64;
  c.strategy.sparseloco_topk = 8;
  return c;
}

TEST(SparseLoCo, TheRowChecksItsOptionsAndListsItsSettings) {
  TrainConfig config = tiny_sparseloco(0, 1);
  config.validate();
  EXPECT_EQ(describe_strategy(config),
            "sparseloco H=5 beta=0.95 outer-lr=1 clip=1 "
            "codec=chunktopk:chunk=64,topk=8,values=int2");
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  SoloGroup alone;
  SoloGather gather;
  EXPECT_NE(dynamic_cast<SparseLoCo*>(make_strategy(config, loop, alone, nullptr, &gather).get()),
            nullptr);
  EXPECT_THROW((void)make_strategy(config, loop, alone), Error) << "it needs a gather group";
  std::vector<std::string> names;
  for (const proto::Setting& s : run_settings(config)) names.push_back(s.name);
  for (const char* name :
       {"strategy.diloco-h", "strategy.sparseloco-chunk", "strategy.sparseloco-topk",
        "strategy.sparseloco-bits", "strategy.sparseloco-beta", "strategy.sparseloco-outer-lr",
        "strategy.sparseloco-clip", "strategy.sparseloco-zstd"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_NE(config.identity().find("strategy.sparseloco-topk=8"), std::string::npos);

  const auto refused = [](const std::function<void(StrategySection&)>& edit,
                          const std::string& says) {
    TrainConfig c = tiny_sparseloco(0, 1);
    edit(c.strategy);
    try {
      c.validate();
      ADD_FAILURE() << "accepted: " << says;
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::config);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused([](StrategySection& s) { s.codec = "int8"; }, "strategy.codec does not apply");
  refused([](StrategySection& s) { s.sparseloco_chunk = 65537; }, "sparseloco-chunk");
  refused([](StrategySection& s) { s.sparseloco_topk = 65; }, "sparseloco-topk");
  refused([](StrategySection& s) { s.sparseloco_topk = 0; }, "sparseloco-topk");
  refused([](StrategySection& s) { s.sparseloco_topk = 12; }, "a multiple of 8");
  refused([](StrategySection& s) { s.sparseloco_bits = 3; }, "sparseloco-bits");
  refused([](StrategySection& s) { s.sparseloco_beta = 1.0f; }, "sparseloco-beta");
  refused([](StrategySection& s) { s.sparseloco_outer_lr = 0.0f; }, "sparseloco-outer-lr");
  refused([](StrategySection& s) { s.sparseloco_clip = 0.5f; }, "sparseloco-clip");
  refused([](StrategySection& s) { s.sparseloco_zstd = 20; }, "sparseloco-zstd");
  refused([](StrategySection& s) { s.diloco_h = 0; }, "diloco-h");
}

// Four workers (gather_workers.hpp): the same state after every step and learning, each its own
// e, a round every H = 5 steps with AdamW's step on every inner step.
TEST(SparseLoCo, FourWorkersHoldTheSameStateAfterEveryRoundAndLearn) {
  constexpr std::uint32_t kWorkers = 4;
  constexpr std::uint64_t kSteps = 60;
  std::vector<TrainConfig> configs;
  for (std::uint32_t w = 0; w < kWorkers; ++w) configs.push_back(tiny_sparseloco(w, kWorkers));
  test::GatherWorkers<SparseLoCo> workers(std::move(configs));
  workers.run(kSteps, [](const TrainConfig& config, InnerLoop& loop, GatherGroup& member) {
    return std::make_unique<SparseLoCo>(sparseloco_config(config.strategy), loop.layout(), member);
  });
  workers.expect_agree_and_learn();
  for (std::uint32_t w = 0; w < kWorkers; ++w) {
    EXPECT_EQ(workers.strategies[w]->shared().round(), kSteps / 5);
    EXPECT_EQ(workers.optimizer_steps[w], kSteps) << "worker " << w;
    if (w > 0) {
      EXPECT_NE(blake2b(workers.strategies[w]->error()), blake2b(workers.strategies[0]->error()))
          << "each worker's e is its own (worker " << w << ")";
    }
  }
  // k/c = 1/8 here: a message of about P/8·(2 + 2/8) bytes and the headers of the tiny model's
  // tensors, below half of DiLoCo's int8 (≈ P bytes).
  const std::size_t params = workers.loops[0]->params().data().size();
  EXPECT_LT(workers.strategies[0]->last_message_bytes(), params / 2);
}

}  // namespace
}  // namespace loco::train
