#include "loco/train/corpus.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/data/dataset_reader.hpp"
#include "loco/data/markov_source.hpp"

namespace loco::train {

Corpus::Corpus(const DataSection& config, std::uint32_t vocab) {
  if (config.source == "markov") {
    data::MarkovConfig markov = config.markov;
    markov.vocab_size = vocab;
    const data::MarkovSource source(markov);
    // Two independent sequences of the same chain: different start states and draws.
    owned_train_ = source.generate(config.markov_train_tokens, 1);
    owned_validation_ = source.generate(config.markov_val_tokens, 2);
    train_ = owned_train_;
    validation_ = owned_validation_;
    entropy_floor_ = source.entropy_rate();
  } else if (config.source == "files") {
    if (config.train_file.empty() || config.val_file.empty()) {
      throw Error(ErrorCategory::config,
                  "data.source = files needs data.train-file and data.val-file (make them with "
                  "loco-prepare)");
    }
    train_file_.emplace(config.train_file, vocab);
    validation_file_.emplace(config.val_file, vocab);
    train_ = train_file_->tokens();
    validation_ = validation_file_->tokens();
    content_identity_ = fmt::format("data.train-tokens={}\ndata.val-tokens={}\n",
                                    to_hex(blake2b(std::as_bytes(train_))),
                                    to_hex(blake2b(std::as_bytes(validation_))));
  } else if (config.source == "dataset") {
    read_dataset(config, vocab);
  } else {
    throw Error(ErrorCategory::config,
                "data.source must be 'markov', 'files' or 'dataset', not '" + config.source + "'");
  }
}

void Corpus::read_dataset(const DataSection& config, std::uint32_t vocab) {
  if (config.manifest.empty())
    throw Error(ErrorCategory::config,
                "data.source = dataset needs data.manifest: the manifest.txt of the dataset's "
                "folder (loco-prepare --out-dir writes one)");
  // Every shard is read and checked here, before the first step (the run's config names the
  // manifest by hash; the manifest names each shard and the tokenizer model by hash).
  std::filesystem::path manifest = config.manifest;
  if (std::filesystem::is_directory(manifest)) manifest /= data::kManifestName;
  data::Dataset dataset = data::read_dataset(manifest, config.manifest_hash);
  manifest_ = dataset.manifest;
  check_vocab(vocab);
  tokenizer_.emplace(data::read_tokenizer(dataset.folder, dataset.manifest));
  owned_train_ = std::move(dataset.train);
  owned_validation_ = std::move(dataset.validation);
  train_ = owned_train_;
  validation_ = owned_validation_;
}

Corpus::Corpus(const data::DatasetManifest& manifest, const std::filesystem::path& folder,
               std::uint32_t vocab)
    : manifest_(manifest) {
  check_vocab(vocab);
  tokenizer_.emplace(data::read_tokenizer(folder, manifest));
  for (const data::DatasetFile& shard : manifest.validation) {
    const std::vector<std::uint16_t> tokens = data::read_shard(folder, manifest, shard);
    owned_validation_.insert(owned_validation_.end(), tokens.begin(), tokens.end());
  }
  validation_ = owned_validation_;
}

void Corpus::check_vocab(std::uint32_t vocab) const {
  if (manifest_->vocab > vocab)
    throw Error(ErrorCategory::config,
                fmt::format("the dataset's tokenizer has {} tokens, more than model.vocab = {}",
                            manifest_->vocab, vocab));
}

std::string Corpus::sample(const data::HeldTokens& held, data::ShardSpec shard,
                           std::size_t tokens) const {
  if (!tokenizer_) return {};
  const data::TokenRange range = data::shard_range(held.total, shard);
  const std::uint64_t end = std::min(range.end, held.first + held.tokens.size());
  if (range.begin < held.first || end <= range.begin) return {};
  const std::size_t n = std::min<std::size_t>(tokens, end - range.begin);
  const std::span<const std::uint16_t> part = held.tokens.subspan(range.begin - held.first, n);
  const std::vector<std::uint32_t> wide(part.begin(), part.end());
  return data::printable(tokenizer_->decode(wide));
}

void log_data_sample(const Corpus& corpus, data::ShardSpec shard) {
  log_data_sample(corpus, shard, corpus.held());
}

void log_data_sample(const Corpus& corpus, data::ShardSpec shard, const data::HeldTokens& held) {
  const data::DatasetManifest* manifest = corpus.manifest();
  if (manifest == nullptr) return;
  const data::ShardSpan span = data::train_shards_of(*manifest, shard);
  const data::TokenRange range = data::shard_range(manifest->train_tokens(), shard);
  if (span.first < span.end)
    spdlog::info("data shard {} of {}: dataset shards {} to {} ({} tokens, {} tokenizer)",
                 shard.index, shard.count, manifest->train[span.first].name,
                 manifest->train[span.end - 1].name, range.end - range.begin, manifest->tokenizer);
  spdlog::info("sample: \"{}\"", corpus.sample(held, shard, 64));
}

std::string checkpoint_identity(const TrainConfig& config, const Corpus& corpus) {
  return config.identity() + corpus.content_identity();
}

}  // namespace loco::train
