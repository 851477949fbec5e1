#include "loco/optim/adamw.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"

namespace loco::optim {
namespace {

std::shared_ptr<const ArenaLayout> layout() {
  return std::make_shared<const ArenaLayout>(
      std::vector<TensorSpec>{{"w", {3, 5}}, {"b", {7}}, {"gain", {4}}, {"w2", {2, 2, 2}}});
}

void fill_normal(Arena& a, float scale, std::uint64_t seed) {
  Rng rng(seed);
  for (std::size_t i = 0; i < a.layout().tensor_count(); ++i) {
    for (float& x : a.tensor(i)) x = scale * rng.normal();
  }
}

// The textbook update in double, element by element, for comparison.
struct Reference {
  std::vector<double> p, m, v;
  void step(const std::vector<double>& g_raw, const std::vector<bool>& decays, double lr,
            const AdamWConfig& c, int t) {
    double norm = 0;
    for (double g : g_raw) norm += g * g;
    norm = std::sqrt(norm);
    const double scale = norm > c.grad_clip ? c.grad_clip / norm : 1.0;
    for (std::size_t j = 0; j < p.size(); ++j) {
      const double g = g_raw[j] * scale;
      m[j] = c.beta1 * m[j] + (1 - c.beta1) * g;
      v[j] = c.beta2 * v[j] + (1 - c.beta2) * g * g;
      const double mh = m[j] / (1 - std::pow(c.beta1, t));
      const double vh = v[j] / (1 - std::pow(c.beta2, t));
      p[j] -= lr * (mh / (std::sqrt(vh) + c.eps) + (decays[j] ? c.weight_decay : 0.0) * p[j]);
    }
  }
};

TEST(AdamW, MatchesTheTextbookUpdateWithClippingAndDecayOnMatricesOnly) {
  const auto l = layout();
  Arena params(l), grads(l);
  fill_normal(params, 1.0f, 1);
  AdamWConfig config;  // defaults: 0.9, 0.95, 1e-8, wd 0.1, clip 1.0
  AdamW opt(l, config);

  Reference ref;
  std::vector<bool> decays;
  for (std::size_t i = 0; i < l->tensor_count(); ++i) {
    for (float x : params.tensor(i)) {
      ref.p.push_back(x);
      decays.push_back(l->tensor(i).shape.size() >= 2);
    }
  }
  ref.m.assign(ref.p.size(), 0.0);
  ref.v.assign(ref.p.size(), 0.0);

  for (int t = 1; t <= 5; ++t) {
    // Steps 1 and 2 have a norm far above the clip threshold; later ones below it.
    fill_normal(grads, t <= 2 ? 3.0f : 0.05f, 100 + t);
    std::vector<double> g;
    for (std::size_t i = 0; i < l->tensor_count(); ++i) {
      for (float x : grads.tensor(i)) g.push_back(x);
    }
    const float lr = 0.01f * static_cast<float>(t);
    const float norm = opt.step(params, grads, lr);
    ref.step(g, decays, lr, config, t);
    if (t <= 2) {
      EXPECT_GT(norm, 2.0f);
    } else {
      EXPECT_LT(norm, 1.0f);
    }
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < l->tensor_count(); ++i) {
    for (float x : params.tensor(i)) EXPECT_NEAR(x, ref.p[k++], 2e-6) << l->tensor(i).name;
  }
  EXPECT_EQ(opt.steps(), 5u);
}

TEST(AdamW, ZeroGradientOnlyDecaysMatrices) {
  const auto l = layout();
  Arena params(l), grads(l);
  params.fill(2.0f);
  AdamW opt(l, AdamWConfig{});
  opt.step(params, grads, 0.5f);
  const float decayed = 2.0f - 0.5f * 0.1f * 2.0f;
  for (float x : params.tensor(0)) EXPECT_FLOAT_EQ(x, decayed);  // w [3,5]
  for (float x : params.tensor(1)) EXPECT_EQ(x, 2.0f);           // bias
  for (float x : params.tensor(2)) EXPECT_EQ(x, 2.0f);           // gain
  for (float x : params.tensor(3)) EXPECT_FLOAT_EQ(x, decayed);  // rank 3
}

TEST(AdamW, GlobalNormCoversEveryTensor) {
  const auto l = layout();
  Arena grads(l);
  grads.fill(1.0f);
  EXPECT_DOUBLE_EQ(global_norm(grads), std::sqrt(static_cast<double>(l->parameter_count())));
}

TEST(AdamW, RejectsBadConfig) {
  EXPECT_THROW(AdamW(layout(), AdamWConfig{.beta1 = 1.0f}), Error);
  EXPECT_THROW(AdamW(layout(), AdamWConfig{.eps = 0.0f}), Error);
  EXPECT_THROW(AdamW(layout(), AdamWConfig{.grad_clip = -1.0f}), Error);
}

}  // namespace
}  // namespace loco::optim
