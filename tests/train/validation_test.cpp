// The validation loss is measured on one fixed set of windows of the validation split, whatever the
// training seed: two runs that differ only in their seed are judged on the same data.

#include <gtest/gtest.h>

#include "loco/train/corpus.hpp"
#include "loco/train/inner_loop.hpp"

namespace loco::train {
namespace {

TrainConfig run_with_seed(std::uint64_t seed) {
  TrainConfig c;
  c.model.gpt =
      model::GptConfig{.vocab = 16, .context = 16, .n_layer = 1, .n_head = 2, .d_model = 16};
  c.data.markov_train_tokens = 4'000;
  c.data.markov_val_tokens = 4'000;
  c.train.batch = 4;
  c.train.eval_batches = 3;
  c.train.seed = seed;
  return c;
}

TEST(Validation, TheSameParametersScoreTheSameWhateverTheTrainingSeed) {
  const TrainConfig one = run_with_seed(1);
  const TrainConfig two = run_with_seed(2);
  const Corpus corpus(one.data, 16);
  InnerLoop a(one, corpus);
  InnerLoop b(two, corpus);
  b.params().copy_from(a.params());
  EXPECT_EQ(a.evaluate(), b.evaluate());
}

}  // namespace
}  // namespace loco::train
