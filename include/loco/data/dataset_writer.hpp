#pragma once
// Writing a dataset (dataset_manifest.hpp): a text tokenised into shards of a fixed token count,
// each hashed as it is written, and the manifest that names them. loco-prepare --out-dir.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "loco/data/dataset_manifest.hpp"
#include "loco/data/tokenizer.hpp"

namespace loco::data {

// One split's shards: `prefix`-00000.bin, `prefix`-00001.bin, ... of `shard_tokens` tokens each
// (the last one shorter), `token_bytes` little-endian bytes a token.
class ShardWriter {
 public:
  ShardWriter(std::filesystem::path folder, std::string prefix, std::uint64_t shard_tokens,
              std::uint32_t token_bytes);
  void append(std::span<const std::uint32_t> tokens);
  // Writes the partial last shard and returns every shard's entry.
  std::vector<DatasetFile> finish();

 private:
  void flush();

  std::filesystem::path folder_;
  std::string prefix_;
  std::uint64_t shard_tokens_;
  std::uint32_t token_bytes_;
  std::vector<std::uint8_t> pending_;  // the current shard's bytes
  std::vector<DatasetFile> written_;
};

struct DatasetOptions {
  double validation_fraction = 0.1;  // in (0, 1)
  std::uint64_t shard_tokens = 1u << 20;
};

struct PreparedDataset {
  DatasetManifest manifest;
  Digest manifest_digest{};  // BLAKE2b-256 of the manifest file: the run config's manifest-hash
};

// Tokenises `text` line by line with `tokenizer` and writes the shards and `folder`/manifest.txt.
// The lines that start in the last ⌊size × validation_fraction⌋ bytes of the text are the
// validation split, the others the training split. A SentencePiece tokenizer's model must already
// be `folder`/tokenizer.model (the manifest names it by hash). Throws Error(io) for unreadable
// input or unwritable output, Error(format) for a text that leaves a split empty,
// Error(invalid_argument) for bad options.
PreparedDataset prepare_dataset(const std::filesystem::path& text,
                                const std::filesystem::path& folder, const Tokenizer& tokenizer,
                                const DatasetOptions& options);

}  // namespace loco::data
