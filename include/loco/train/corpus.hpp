#pragma once
// The training and validation tokens of a run, from the synthetic Markov source (generated in
// memory, with its exact entropy rate), from token files (memory-mapped), or from a dataset's
// shards (data/dataset_reader.hpp: read into memory, each checked against the run's manifest).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/data/batch_sampler.hpp"
#include "loco/data/dataset_manifest.hpp"
#include "loco/data/token_file.hpp"
#include "loco/data/tokenizer.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

class Corpus {
 public:
  // Generates or opens the tokens `config.data` describes, for `vocab` tokens. Throws the data
  // module's errors (a missing file, a token ≥ vocab, ...).
  Corpus(const DataSection& config, std::uint32_t vocab);
  // A fetched dataset's validation shards and tokenizer (in `folder`, checked) without its
  // training tokens: a peer's arrive a shard at a time (fetch/shard_feed.hpp, InnerLoop::
  // set_tokens). Throws as above.
  Corpus(const data::DatasetManifest& manifest, const std::filesystem::path& folder,
         std::uint32_t vocab);

  std::span<const std::uint16_t> train() const { return train_; }
  std::span<const std::uint16_t> validation() const { return validation_; }
  // The best achievable loss in nats per token, when the source is known (Markov).
  std::optional<double> entropy_floor() const { return entropy_floor_; }
  // Token files: lines naming the BLAKE2b of each file's tokens (read once, at construction, at
  // about 1 GB/s). Empty for the Markov source, which its options fix.
  const std::string& content_identity() const { return content_identity_; }
  // A dataset's manifest (null for the other sources).
  const data::DatasetManifest* manifest() const { return manifest_ ? &*manifest_ : nullptr; }
  // The text of the first `tokens` tokens of `shard` in `held`, decoded by the dataset's tokenizer
  // and made printable, for a human to check the data (a "sample" log line). Empty for the other
  // sources: their tokens are not known to be text.
  std::string sample(const data::HeldTokens& held, data::ShardSpec shard, std::size_t tokens) const;
  // The training tokens as a whole (empty for a peer's fetched dataset).
  data::HeldTokens held() const { return {.tokens = train_, .first = 0, .total = train_.size()}; }

 private:
  void read_dataset(const DataSection& config, std::uint32_t vocab);
  void check_vocab(std::uint32_t vocab) const;

  // Tokens held in memory: generated (Markov) or read from a dataset's shards.
  std::vector<std::uint16_t> owned_train_, owned_validation_;
  std::optional<data::TokenFile> train_file_, validation_file_;
  std::span<const std::uint16_t> train_, validation_;
  std::optional<double> entropy_floor_;
  std::optional<data::DatasetManifest> manifest_;
  std::optional<data::Tokenizer> tokenizer_;
  std::string content_identity_;
};

// For a dataset: logs which manifest shards hold `shard`'s tokens, and a "sample" line, the first
// 64 tokens of `shard` (in `held`, by default the corpus's) as text, for a human to check the data
// and its tokenizer. Nothing for the other sources.
void log_data_sample(const Corpus& corpus, data::ShardSpec shard);
void log_data_sample(const Corpus& corpus, data::ShardSpec shard, const data::HeldTokens& held);

// What a checkpoint of this run is saved and resumed under: the options that fix its layout and
// data stream (TrainConfig::identity) and the data by content, so other tokens at the same path
// are refused and the same tokens at another path resume.
std::string checkpoint_identity(const TrainConfig& config, const Corpus& corpus);

}  // namespace loco::train
