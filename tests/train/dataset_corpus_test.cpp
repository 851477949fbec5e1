// A run's config naming a dataset: its corpus read and checked, the sample line's text, the
// settings the tracker compares at admission, and the checks of the config itself.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../support/english_text.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/data/dataset_writer.hpp"
#include "loco/proto/admission.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/run_settings.hpp"

namespace loco::train {
namespace {

using ::testing::HasSubstr;

// A byte-level dataset of a short English text in `dir`, and a config naming it.
TrainConfig dataset_run(const test::TempDir& dir, const std::string& text) {
  std::ofstream(dir / "text.txt", std::ios::binary) << text;
  const data::PreparedDataset prepared = data::prepare_dataset(
      dir / "text.txt", dir.path(), data::Tokenizer::bytes(), {.shard_tokens = 500});
  TrainConfig c;
  c.model.gpt =
      model::GptConfig{.vocab = 256, .context = 8, .n_layer = 1, .n_head = 2, .d_model = 8};
  c.data.source = "dataset";
  c.data.manifest = dir.path().string();  // the folder: its manifest.txt
  c.data.manifest_hash = to_hex(prepared.manifest_digest);
  return c;
}

TEST(DatasetCorpus, TrainsOnTheShardsAndSamplesTheirText) {
  test::TempDir dir;
  const std::string text = test::english_text(100);
  const TrainConfig config = dataset_run(dir, text);
  config.validate();
  const Corpus corpus(config.data, 256);
  ASSERT_NE(corpus.manifest(), nullptr);
  EXPECT_EQ(corpus.train().size() + corpus.validation().size(), text.size());
  EXPECT_EQ(corpus.sample(corpus.held(), {0, 1}, 20), data::printable(text.substr(0, 20)));
  const data::TokenRange second = data::shard_range(corpus.train().size(), {1, 2});
  EXPECT_EQ(corpus.sample(corpus.held(), {1, 2}, 10),
            data::printable(text.substr(second.begin, 10)));
  EXPECT_THAT(config.identity(), HasSubstr("data.manifest-hash=" + config.data.manifest_hash));
}

TEST(DatasetCorpus, AModelVocabularySmallerThanTheDatasetsIsRefused) {
  test::TempDir dir;
  const TrainConfig config = dataset_run(dir, test::english_text(100));
  try {
    const Corpus corpus(config.data, 128);
    FAIL() << "a vocabulary of 256 read by a model of 128";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_THAT(e.message(), HasSubstr("has 256 tokens, more than model.vocab = 128"));
  }
}

TEST(DatasetCorpus, TheManifestHashIsARunSettingTheTrackerCompares) {
  test::TempDir a_dir, b_dir;
  const TrainConfig a = dataset_run(a_dir, test::english_text(100, 1));
  const TrainConfig b = dataset_run(b_dir, test::english_text(100, 2));
  EXPECT_THAT(proto::settings_refusal(run_settings(a), run_settings(b)).value_or("admitted"),
              HasSubstr("setting data.manifest-hash differs"));
  EXPECT_EQ(proto::settings_refusal(run_settings(a), run_settings(a)), std::nullopt);
}

TEST(DatasetCorpus, TheConfigNeedsAManifestAndItsHash) {
  test::TempDir dir;
  TrainConfig bad_hash = dataset_run(dir, test::english_text(100));
  bad_hash.data.manifest_hash = "ABC";
  EXPECT_THROW(bad_hash.validate(), Error);
  TrainConfig no_manifest = dataset_run(dir, test::english_text(100));
  no_manifest.data.manifest.clear();
  try {
    const Corpus corpus(no_manifest.data, 256);
    FAIL() << "read a dataset without a manifest";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("needs data.manifest"));
  }
}

}  // namespace
}  // namespace loco::train
