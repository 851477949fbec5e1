// The validation loss is measured on one fixed set of windows of the validation split, whatever the
// training seed or batch: two runs that differ only in those are judged on the same data.

#include <gtest/gtest.h>

#include <cmath>

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
  c.train.eval_windows = 12;
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

// A swarm's peers and one process at 4× their batch are compared on the same windows: 12 windows
// read as 3 batches of 4, as 5 + 5 + the first 2 of a third batch, or as one batch of 12.
TEST(Validation, TheSameParametersScoreTheSameWhateverTheBatch) {
  const TrainConfig fours = run_with_seed(1);
  TrainConfig fives = fours, twelve = fours;
  fives.train.batch = 5;
  twelve.train.batch = 12;
  const Corpus corpus(fours.data, 16);
  InnerLoop a(fours, corpus), b(fives, corpus), c(twelve, corpus);
  b.params().copy_from(a.params());
  c.params().copy_from(a.params());
  const float loss = a.evaluate();
  // The same windows, summed in another order: equal to float rounding.
  EXPECT_NEAR(b.evaluate(), loss, 1e-5 * loss);
  EXPECT_NEAR(c.evaluate(), loss, 1e-5 * loss);
  // And not the same as other windows: 13 windows (one more) score otherwise.
  TrainConfig thirteen = fours;
  thirteen.train.eval_windows = 13;
  InnerLoop d(thirteen, corpus);
  d.params().copy_from(a.params());
  EXPECT_GT(std::abs(d.evaluate() - loss), 1e-4 * loss);
}

}  // namespace
}  // namespace loco::train
