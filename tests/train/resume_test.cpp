// Bit-exact reproducibility of training: same seed and thread count → same parameters, and
// 2N steps == N steps + checkpoint + restart + N steps, bit for bit.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/data/token_file.hpp"
#include "loco/train/trainer.hpp"

namespace loco::train {
namespace {

TrainConfig small_run(int threads) {
  TrainConfig c;
  // Big enough (batch·context·d_model = 2^15) that every layer takes its parallel path.
  c.model.gpt =
      model::GptConfig{.vocab = 16, .context = 64, .n_layer = 2, .n_head = 4, .d_model = 64};
  c.data.markov = data::MarkovConfig{.order = 1, .successors = 3, .seed = 5};
  c.data.markov_train_tokens = 20'000;
  c.data.markov_val_tokens = 2'000;
  c.lr = optim::LrSchedule{.max_lr = 3e-3f, .min_lr = 3e-4f, .warmup_steps = 4};
  c.train.steps = 8;
  c.train.batch = 8;
  c.train.threads = threads;
  c.train.log_every = 4;
  c.train.eval_windows = 16;
  return c;
}

TEST(Resume, SameSeedAndThreadsGiveTheSameBitsAndAnotherSeedDoesNot) {
  for (int threads : {1, 2}) {
    const TrainSummary a = run_training(small_run(threads));
    const TrainSummary b = run_training(small_run(threads));
    EXPECT_EQ(a.params_blake2b, b.params_blake2b) << threads << " threads";
    EXPECT_EQ(a.val_loss, b.val_loss);
  }
  TrainConfig other = small_run(1);
  other.train.seed = 2;
  EXPECT_NE(run_training(other).params_blake2b, run_training(small_run(1)).params_blake2b);
}

TEST(Resume, CheckpointAndRestartContinuesBitForBit) {
  test::TempDir dir;
  const TrainSummary straight = run_training(small_run(2));
  EXPECT_EQ(straight.end_step, 8u);

  TrainConfig first_half = small_run(2);
  first_half.train.stop_at = 4;
  first_half.train.checkpoint = (dir / "half.safetensors").string();
  const TrainSummary half = run_training(first_half);
  EXPECT_EQ(half.end_step, 4u);
  EXPECT_NE(half.params_blake2b, straight.params_blake2b);

  TrainConfig second_half = small_run(2);
  second_half.train.resume = first_half.train.checkpoint;
  const TrainSummary resumed = run_training(second_half);
  EXPECT_EQ(resumed.start_step, 4u);
  EXPECT_EQ(resumed.end_step, 8u);
  EXPECT_EQ(resumed.params_blake2b, straight.params_blake2b);
  EXPECT_EQ(resumed.val_loss, straight.val_loss);
}

// A run resumed at its last step trains nothing and says so, with the checkpoint's own figures:
// no train loss or speed of no steps (it printed "final train loss 0.0000 ... 0 tokens/s").
TEST(Resume, AFinishedRunResumedSaysItHadNothingToDo) {
  test::TempDir dir;
  TrainConfig finished = small_run(1);
  finished.train.checkpoint = (dir / "end.safetensors").string();
  const TrainSummary first = run_training(finished);
  EXPECT_NE(describe(first, finished).find("trained "), std::string::npos);
  EXPECT_NE(describe(first, finished).find("final train loss"), std::string::npos);

  TrainConfig again = small_run(1);
  again.train.resume = finished.train.checkpoint;
  const TrainSummary resumed = run_training(again);
  EXPECT_EQ(resumed.start_step, 8u);
  EXPECT_EQ(resumed.end_step, 8u);
  EXPECT_FALSE(resumed.train_loss);
  EXPECT_EQ(resumed.val_loss, first.val_loss) << "the checkpoint's own validation loss";
  const std::string text = describe(resumed, again);
  EXPECT_NE(text.find("nothing to train: gpt of "), std::string::npos) << text;
  EXPECT_NE(text.find("the checkpoint is at step 8 of 8"), std::string::npos) << text;
  EXPECT_EQ(text.find("train loss"), std::string::npos) << text;
  EXPECT_EQ(text.find("tokens/s"), std::string::npos) << text;
  EXPECT_NE(text.find("parameters blake2b " + first.params_blake2b), std::string::npos) << text;
}

// A run on token files is resumed by the files' content: the same tokens at another path resume,
// other tokens at the same path are refused, naming the data.
TEST(Resume, TheDataIsCheckedByContentNotByPath) {
  test::TempDir dir;
  const auto tokens = [](std::uint16_t salt) {
    std::vector<std::uint16_t> t(20'000);
    for (std::size_t i = 0; i < t.size(); ++i)
      t[i] = static_cast<std::uint16_t>((i * 7 + salt) % 16);
    return t;
  };
  const auto on_files = [&](const std::filesystem::path& folder) {
    TrainConfig c = small_run(1);
    c.data.source = "files";
    c.data.train_file = (folder / "train.bin").string();
    c.data.val_file = (folder / "val.bin").string();
    c.train.checkpoint = (dir / "half.safetensors").string();
    return c;
  };
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  for (const char* folder : {"a", "b"}) {
    data::write_token_file(dir / folder / "train.bin", tokens(1));
    data::write_token_file(dir / folder / "val.bin", tokens(2));
  }
  TrainConfig first = on_files(dir / "a");
  first.train.stop_at = 4;
  run_training(first);

  TrainConfig moved = on_files(dir / "b");
  moved.train.resume = first.train.checkpoint;
  moved.train.checkpoint.clear();
  EXPECT_EQ(run_training(moved).end_step, 8u) << "the same tokens at another path";

  data::write_token_file(dir / "a" / "train.bin", tokens(3));
  TrainConfig changed = on_files(dir / "a");
  changed.train.resume = first.train.checkpoint;
  changed.train.checkpoint.clear();
  try {
    run_training(changed);
    ADD_FAILURE() << "other tokens at the same path resumed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data.train-tokens="), std::string::npos) << e.what();
  }
}

TEST(Resume, RefusesACheckpointOfAnotherModel) {
  test::TempDir dir;
  TrainConfig run = small_run(1);
  run.train.stop_at = 2;
  run.train.checkpoint = (dir / "ckpt.safetensors").string();
  run_training(run);

  TrainConfig wider = small_run(1);
  wider.model.gpt.d_model = 32;
  wider.train.resume = run.train.checkpoint;
  try {
    run_training(wider);
    FAIL() << "resumed a checkpoint of another model";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_NE(std::string(e.what()).find("model.d-model=64"), std::string::npos) << e.what();
  }
}

TEST(Resume, RefusesACheckpointWhoseDigestWasRemoved) {
  // Any safetensors file reads without a digest (for --init), but a training checkpoint is
  // loco's own and always has one: without it, it was edited.
  test::TempDir dir;
  TrainConfig run = small_run(1);
  run.train.stop_at = 2;
  run.train.checkpoint = (dir / "ckpt.safetensors").string();
  run_training(run);
  std::string bytes;
  {
    std::ifstream in(run.train.checkpoint, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t key = bytes.find("loco.blake2b");
  ASSERT_NE(key, std::string::npos);
  bytes[key + 11] = 'c';  // "loco.blake2c": an ordinary metadata entry
  std::ofstream(run.train.checkpoint, std::ios::binary | std::ios::trunc) << bytes;

  TrainConfig resumed = small_run(1);
  resumed.train.resume = run.train.checkpoint;
  try {
    run_training(resumed);
    FAIL() << "resumed a checkpoint without its digest";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_NE(std::string(e.what()).find("no digest"), std::string::npos) << e.what();
  }
}

TEST(Resume, MlpTrainsAndResumesToo) {
  test::TempDir dir;
  TrainConfig mlp = small_run(2);
  mlp.model.kind = "mlp";
  mlp.model.mlp_embed = 8;
  mlp.model.mlp_hidden = 16;
  const TrainSummary straight = run_training(mlp);
  mlp.train.stop_at = 3;
  mlp.train.checkpoint = (dir / "mlp.safetensors").string();
  run_training(mlp);
  mlp.train.stop_at = 0;
  mlp.train.resume = mlp.train.checkpoint;
  EXPECT_EQ(run_training(mlp).params_blake2b, straight.params_blake2b);
}

TEST(Resume, ADiLoCoRunResumesInTheMiddleOfARoundBitForBit) {
  test::TempDir dir;
  TrainConfig run = small_run(2);
  run.strategy.kind = "diloco";
  run.strategy.diloco_h = 3;  // rounds after steps 3 and 6; stop after 4: mid-round
  const TrainSummary straight = run_training(run);

  run.train.stop_at = 4;
  run.train.checkpoint = (dir / "diloco.safetensors").string();
  run_training(run);
  run.train.stop_at = 0;
  run.train.resume = run.train.checkpoint;
  const TrainSummary resumed = run_training(run);
  EXPECT_EQ(resumed.params_blake2b, straight.params_blake2b);
  // A checkpoint without the outer state is not a DiLoCo run's.
  TrainConfig plain = small_run(2);
  plain.train.stop_at = 2;
  plain.train.checkpoint = (dir / "plain.safetensors").string();
  run_training(plain);
  run.train.resume = plain.train.checkpoint;
  EXPECT_THROW(run_training(run), Error);
}

// DeMo: θ (and, late, the pending direction) are shared arenas, δ rides in the AdamW first-moment
// arena: a resume continues bit for bit. A checkpoint of other DeMo options is refused.
TEST(Resume, ADeMoRunResumesBitForBitWithItsMomentum) {
  for (const bool late : {false, true}) {
    SCOPED_TRACE(late ? "late" : "on time");
    test::TempDir dir;
    TrainConfig run = small_run(1);
    run.model.gpt.n_layer = 1;  // smaller than the others: each DeMo step adds its DCTs
    run.model.gpt.d_model = 32;
    run.strategy.kind = "demo";
    run.strategy.demo_chunk = 16;
    run.strategy.demo_topk = 4;
    run.strategy.demo_late = late;
    const TrainSummary straight = run_training(run);

    run.train.stop_at = 4;
    run.train.checkpoint = (dir / "demo.safetensors").string();
    run_training(run);
    run.train.stop_at = 0;
    run.train.resume = run.train.checkpoint;
    const TrainSummary resumed = run_training(run);
    EXPECT_EQ(resumed.start_step, 4u);
    EXPECT_EQ(resumed.params_blake2b, straight.params_blake2b);

    run.strategy.demo_topk = 5;
    EXPECT_THROW(run_training(run), Error);
  }
}

// SparseLoCo: θ is the shared arena and e its own ("sparseloco.error"), checkpointed: stopped
// after step 4 (one round in, e not zero, mid-round), a resume continues bit for bit. A
// checkpoint of other SparseLoCo options is refused.
TEST(Resume, ASparseLoCoRunResumesBitForBitWithItsErrorFeedback) {
  test::TempDir dir;
  TrainConfig run = small_run(1);
  run.strategy.kind = "sparseloco";
  run.strategy.diloco_h = 3;  // rounds after steps 3 and 6
  run.strategy.sparseloco_chunk = 64;
  run.strategy.sparseloco_topk = 8;
  const TrainSummary straight = run_training(run);

  run.train.stop_at = 4;
  run.train.checkpoint = (dir / "sparseloco.safetensors").string();
  run_training(run);
  run.train.stop_at = 0;
  run.train.resume = run.train.checkpoint;
  const TrainSummary resumed = run_training(run);
  EXPECT_EQ(resumed.start_step, 4u);
  EXPECT_EQ(resumed.params_blake2b, straight.params_blake2b);

  run.strategy.sparseloco_topk = 16;
  EXPECT_THROW(run_training(run), Error);
}

}  // namespace
}  // namespace loco::train
