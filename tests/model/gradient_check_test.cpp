// Central finite differences against the hand-written backward, for every element of every
// parameter tensor of a tiny GPT and of the MLP.
//
// Tolerances: the loss is computed in float, so a difference quotient with step h carries a
// rounding error of about ε_float·|loss|·k / h (k ≈ 10 for the accumulated rounding of a
// forward pass): with h = 1e-2, |loss| ≈ 3, that is ≈ 2e-4; the truncation error h²/6·f''' is
// of the same order. The test allows |numeric − analytic| ≤ 1e-3 + 2e-2·|analytic|, while the
// gradients are O(1e-2 … 1e-1) (asserted below), so a gradient read from a wrong index, a
// missing term or a wrong sign is caught.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "loco/core/arena_maps.hpp"
#include "loco/model/gpt.hpp"
#include "loco/model/mlp.hpp"
#include "test_support.hpp"

namespace loco::model {
namespace {

constexpr float kStep = 1e-2f;
constexpr double kAbsTol = 1e-3;
constexpr double kRelTol = 2e-2;

void check_gradients(Model& model, Arena& params, const TokenBatch& batch) {
  Arena grads(model.layout());
  model.forward(params, batch);
  model.backward(params, grads);
  const ArenaLayout& layout = *model.layout();
  for (std::size_t t = 0; t < layout.tensor_count(); ++t) {
    auto p = params.tensor(t);
    auto g = grads.tensor(t);
    double max_err = 0, grad_norm = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      const float saved = p[i];
      p[i] = saved + kStep;
      const double up = model.forward(params, batch);
      p[i] = saved - kStep;
      const double down = model.forward(params, batch);
      p[i] = saved;
      const double numeric = (up - down) / (2.0 * kStep);
      const double err = std::abs(numeric - g[i]);
      EXPECT_LE(err, kAbsTol + kRelTol * std::abs(g[i]))
          << layout.tensor(t).name << "[" << i << "]: numeric " << numeric << ", analytic " << g[i];
      max_err = std::max(max_err, err);
      grad_norm += static_cast<double>(g[i]) * g[i];
    }
    // The tensor must carry gradient well above the tolerance, or the check proves nothing.
    EXPECT_GT(std::sqrt(grad_norm), 20 * kAbsTol) << layout.tensor(t).name;
  }
}

TEST(GradientCheck, TinyGptEveryParameter) {
  GptConfig cfg{.vocab = 11, .context = 5, .n_layer = 2, .n_head = 2, .d_model = 8};
  Gpt gpt(cfg, 2);
  Arena params(gpt.layout());
  gpt.init(params, 1);
  testing::perturb(params, 0.3f, 2);
  const auto batch = testing::random_batch(2, 5, cfg.vocab, 3);
  check_gradients(gpt, params, batch.view());
}

TEST(GradientCheck, TinyGptShorterSequenceThanContext) {
  GptConfig cfg{.vocab = 7, .context = 6, .n_layer = 1, .n_head = 2, .d_model = 4};
  Gpt gpt(cfg, 3);
  Arena params(gpt.layout());
  gpt.init(params, 4);
  testing::perturb(params, 0.4f, 5);
  const auto batch = testing::random_batch(3, 4, cfg.vocab, 6);
  // wpe rows 4 and 5 are unused: their gradient must be exactly zero.
  Arena grads(gpt.layout());
  gpt.forward(params, batch.view());
  gpt.backward(params, grads);
  const auto dwpe = matrix_map(grads, 1);
  EXPECT_EQ(dwpe.bottomRows(2).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_GT(dwpe.topRows(4).cwiseAbs().maxCoeff(), 0.0f);
}

TEST(GradientCheck, MlpEveryParameter) {
  MlpConfig cfg{.vocab = 7, .d_embed = 5, .d_hidden = 9, .context = 4};
  Mlp mlp(cfg, 3);
  Arena params(mlp.layout());
  mlp.init(params, 7);
  testing::perturb(params, 0.3f, 8);
  const auto batch = testing::random_batch(3, 4, cfg.vocab, 9);
  check_gradients(mlp, params, batch.view());
}

}  // namespace
}  // namespace loco::model
