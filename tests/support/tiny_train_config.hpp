#pragma once
// The tiny training run the strategy tests share: a GPT of `n_layer` blocks (d 32, vocab 16,
// context 32) on an order-1 Markov corpus, 60 steps at batch `batch`, data shard `shard` of
// `shards`, one thread. Each test sets its own strategy.

#include <cstddef>
#include <cstdint>

#include "loco/train/train_config.hpp"

namespace loco::test {

inline train::TrainConfig tiny_train_config(std::uint32_t shard, std::uint32_t shards,
                                            std::size_t n_layer, std::uint32_t batch) {
  train::TrainConfig c;
  c.model.gpt =
      model::GptConfig{.vocab = 16, .context = 32, .n_layer = n_layer, .n_head = 2, .d_model = 32};
  c.data.markov = data::MarkovConfig{.order = 1, .successors = 2, .seed = 3};
  c.data.markov_train_tokens = 40'000;
  c.data.markov_val_tokens = 2'000;
  c.data.shard = data::ShardSpec{shard, shards};
  c.lr = optim::LrSchedule{.max_lr = 3e-3f, .min_lr = 3e-4f, .warmup_steps = 4};
  c.train.steps = 60;
  c.train.batch = batch;
  c.train.threads = 1;
  c.train.eval_windows = 4 * batch;
  return c;
}

}  // namespace loco::test
