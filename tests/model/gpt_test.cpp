#include "loco/model/gpt.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/model/mlp.hpp"
#include "loco/model/model.hpp"
#include "loco/optim/adamw.hpp"
#include "test_support.hpp"

namespace loco::model {
namespace {

TEST(Gpt, LossAtInitialisationIsLogVocab) {
  // With weights N(0, 0.02) the logits have std ≈ 0.02·√d_model ≈ 0.16, so the expected loss
  // exceeds ln V by about σ²/2 ≈ 0.013.
  GptConfig cfg{.vocab = 256, .context = 32, .n_layer = 2, .n_head = 4, .d_model = 64};
  Gpt gpt(cfg, 4);
  Arena params(gpt.layout());
  gpt.init(params, 11);
  const auto batch = testing::random_batch(4, 32, cfg.vocab, 12);
  EXPECT_NEAR(gpt.forward(params, batch.view()), std::log(256.0), 0.05);
}

TEST(Gpt, LayoutFollowsNanoGptNamesAndSizes) {
  GptConfig cfg{.vocab = 256, .context = 128, .n_layer = 4, .n_head = 4, .d_model = 128};
  const ArenaLayout layout(gpt_tensor_specs(cfg));
  EXPECT_EQ(layout.tensor_count(), 2u + 12u * 4u + 2u);
  EXPECT_EQ(layout.tensor(0).name, "transformer.wte.weight");
  EXPECT_EQ(layout.tensor(layout.index_of("transformer.h.3.mlp.c_fc.weight")).shape,
            (std::vector<std::size_t>{512, 128}));
  // 256·128 + 128·128 + 4·(12·128² + 13·128) + 2·128
  EXPECT_EQ(layout.parameter_count(),
            256u * 128 + 128 * 128 + 4 * (12 * 128 * 128 + 13 * 128) + 2 * 128);
}

// The costs gpt.hpp writes beside the layout, per token: each block keeps 9d (qkv 3d, res_attn d,
// fch 4d, res_mlp d); once: encoded d, logits V, losses 1; one block's scratch: ln d + 2, atty d,
// probs H·T, fch_gelu 4d and the gradients d_res d, d_ln d, d_qkv 3d, d_atty d, d_fch 4d,
// d_probs H·T. The layout that kept every block's LayerNorms, attention and GELU held 16d + 4 + H·T
// per block.
TEST(Gpt, ActivationArenaKeepsNineWidthsPerBlock) {
  // Every tensor is a multiple of 16 floats here, so the 64-byte padding adds nothing.
  const GptConfig cfg{.vocab = 48, .context = 16, .n_layer = 3, .n_head = 2, .d_model = 32};
  const std::size_t tokens = 2 * 16, d = 32, ht = 2 * 16;
  const Gpt gpt(cfg, 2);
  const std::size_t kept = 3 * 9 * d + d + 48 + 1;
  const std::size_t scratch = (d + 2 + d + ht + 4 * d) + (d + d + 3 * d + d + 4 * d + ht);
  EXPECT_EQ(gpt.activation_floats(), tokens * (kept + scratch));
}

TEST(Gpt, OverfitsOneBatch) {
  GptConfig cfg{.vocab = 16, .context = 16, .n_layer = 2, .n_head = 2, .d_model = 32};
  Gpt gpt(cfg, 2);
  Arena params(gpt.layout()), grads(gpt.layout());
  gpt.init(params, 21);
  optim::AdamW opt(gpt.layout(), optim::AdamWConfig{.weight_decay = 0.0f});
  const auto batch = testing::random_batch(2, 16, cfg.vocab, 22);
  float loss = 0;
  for (int step = 0; step < 150; ++step) {
    loss = gpt.forward(params, batch.view());
    gpt.backward(params, grads);
    opt.step(params, grads, 1e-2f);
  }
  EXPECT_LT(loss, 0.05f);  // from ln 16 ≈ 2.77: the 32 targets are memorised
}

TEST(Gpt, SameSeedAndThreadsGiveIdenticalBits) {
  GptConfig cfg{.vocab = 32, .context = 16, .n_layer = 2, .n_head = 2, .d_model = 32};
  auto train = [&] {
    Gpt gpt(cfg, 3);
    Arena params(gpt.layout()), grads(gpt.layout());
    gpt.init(params, 5);
    optim::AdamW opt(gpt.layout(), optim::AdamWConfig{});
    for (std::uint64_t step = 0; step < 5; ++step) {
      const auto batch = testing::random_batch(3, 16, cfg.vocab, 100 + step);
      gpt.forward(params, batch.view());
      gpt.backward(params, grads);
      opt.step(params, grads, 1e-3f);
    }
    return blake2b(params);
  };
  const auto first = train();
  EXPECT_EQ(first, train());
  Gpt other(cfg, 3);
  Arena init(other.layout());
  other.init(init, 5);
  EXPECT_NE(first, blake2b(init));  // training moved the parameters
}

// The genesis every peer of a run must agree on, whatever its compute threads.
TEST(Gpt, InitialisationDoesNotDependOnTheThreadCount) {
  GptConfig cfg{.vocab = 32, .context = 16, .n_layer = 3, .n_head = 2, .d_model = 32};
  Gpt gpt(cfg, 1);
  const int threads_before = compute_threads();
  auto initialised = [&](int threads) {
    set_compute_threads(threads);
    Arena params(gpt.layout());
    gpt.init(params, 11);
    return blake2b(params);
  };
  const Digest one = initialised(1);
  EXPECT_EQ(initialised(3), one);
  set_compute_threads(threads_before);
}

TEST(Gpt, RejectsBadBatchesAndConfigs) {
  GptConfig cfg{.vocab = 8, .context = 4, .n_layer = 1, .n_head = 2, .d_model = 4};
  Gpt gpt(cfg, 2);
  Arena params(gpt.layout());
  gpt.init(params, 1);
  auto too_long = testing::random_batch(1, 5, 8, 1);
  EXPECT_THROW(gpt.forward(params, too_long.view()), Error);
  auto bad_token = testing::random_batch(1, 4, 8, 1);
  bad_token.targets[2] = 8;
  EXPECT_THROW(gpt.forward(params, bad_token.view()), Error);
  bad_token.targets[2] = -1;
  EXPECT_THROW(gpt.forward(params, bad_token.view()), Error);
  EXPECT_THROW(Gpt(GptConfig{.n_head = 3, .d_model = 128}, 1), Error);
}

TEST(Mlp, LossAtInitialisationIsNearLogVocabAndOverfits) {
  MlpConfig cfg{.vocab = 16, .d_embed = 16, .d_hidden = 64, .context = 8};
  Mlp mlp(cfg, 4);
  Arena params(mlp.layout()), grads(mlp.layout());
  mlp.init(params, 3);
  // A deterministic bigram: target = (input · 5 + 3) mod 16, learnable exactly.
  testing::OwnedBatch batch = testing::random_batch(4, 8, cfg.vocab, 4);
  for (std::size_t i = 0; i < batch.inputs.size(); ++i)
    batch.targets[i] = (batch.inputs[i] * 5 + 3) % 16;
  optim::AdamW opt(mlp.layout(), optim::AdamWConfig{.weight_decay = 0.0f});
  const float initial = mlp.forward(params, batch.view());
  EXPECT_NEAR(initial, std::log(16.0f), 1.0f);  // output weights 1/√64 scale: logits of std ≈ 1
  float loss = initial;
  for (int step = 0; step < 200; ++step) {
    loss = mlp.forward(params, batch.view());
    mlp.backward(params, grads);
    opt.step(params, grads, 1e-2f);
  }
  EXPECT_LT(loss, 0.02f);
}

}  // namespace
}  // namespace loco::model
