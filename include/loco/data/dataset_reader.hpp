#pragma once
// Reading a dataset back (dataset_manifest.hpp), every byte checked against the manifest before
// it is used: the manifest against the run's manifest-hash, each shard's size and BLAKE2b, each
// token against the vocabulary, the tokenizer model's size and BLAKE2b.

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "loco/data/dataset_manifest.hpp"
#include "loco/data/tokenizer.hpp"

namespace loco::data {

struct Dataset {
  DatasetManifest manifest;
  std::filesystem::path folder;
  std::vector<std::uint16_t> train;       // the train shards end to end
  std::vector<std::uint16_t> validation;  // the val shards end to end
};

// Reads the manifest at `manifest_path` and every shard in its folder. Throws Error(config) when
// the manifest's BLAKE2b-256 is not `manifest_hash` (hex): the run names another dataset;
// Error(format) for a malformed manifest, a truncated or longer shard, a shard failing its hash, a
// token ≥ vocab, or 4-byte tokens (loco's models read at most 65536 tokens); Error(io) for a
// missing or unreadable file. Each message names the file.
Dataset read_dataset(const std::filesystem::path& manifest_path, std::string_view manifest_hash);

// One shard of `manifest` in `folder`, checked. Throws as read_dataset.
std::vector<std::uint16_t> read_shard(const std::filesystem::path& folder,
                                      const DatasetManifest& manifest, const DatasetFile& shard);

// The dataset's tokenizer: bytes, or its SentencePiece model checked against the manifest.
Tokenizer read_tokenizer(const std::filesystem::path& folder, const DatasetManifest& manifest);

}  // namespace loco::data
