#pragma once
// A dataset: a folder of token shards and the manifest that names them (docs/FORMATS.md,
// "Datasets"). The manifest is a short text file, e.g.
//
//   loco-dataset/1
//   tokenizer=sentencepiece name=tokenizer.model bytes=238412 blake2b=<64 hex digits>
//   vocab=8000 token-bytes=2 shard-tokens=1048576
//   train name=train-00000.bin tokens=1048576 bytes=2097152 blake2b=<64 hex digits>
//   train name=train-00001.bin tokens=52113 bytes=104226 blake2b=<64 hex digits>
//   val name=val-00000.bin tokens=117000 bytes=234000 blake2b=<64 hex digits>
//
// and a run's config names it by the BLAKE2b-256 of its bytes (`[data] manifest-hash`), which
// therefore fixes every shard's bytes and the tokenizer's. The training tokens are the train
// shards end to end; a peer's data shard i of c (the tracker's assignment) is the tokens
// [⌊i·N/c⌋, ⌊(i+1)·N/c⌋) of them, as for a single token file, which lie in the manifest shards
// train_shards_of() names.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/data/sampler_cursor.hpp"

namespace loco::data {

// One file of the dataset, named relative to the manifest's folder.
struct DatasetFile {
  std::string name;          // 1..100 of [A-Za-z0-9._-], not starting with '.'
  std::uint64_t tokens = 0;  // shards only
  std::uint64_t bytes = 0;
  Digest blake2b{};
  bool operator==(const DatasetFile&) const = default;
};

struct DatasetManifest {
  std::string tokenizer = "bytes";      // or "sentencepiece"
  DatasetFile tokenizer_model;          // sentencepiece: the model file (tokens unused, 0)
  std::uint32_t vocab = 256;            // bytes: 256
  std::uint32_t token_bytes = 2;        // 2 (little-endian uint16) when vocab ≤ 65536, else 4
  std::uint64_t shard_tokens = 0;       // every shard but the last of its split holds exactly this
  std::vector<DatasetFile> train;       // at least one
  std::vector<DatasetFile> validation;  // at least one
  bool operator==(const DatasetManifest&) const = default;

  std::uint64_t train_tokens() const;
};

// The manifest's file name in a dataset's folder, and the SentencePiece model's (loco-prepare's).
inline constexpr const char* kManifestName = "manifest.txt";
inline constexpr const char* kTokenizerModelName = "tokenizer.model";

// Limits of a manifest loco reads: anything larger is refused before it is held.
inline constexpr std::size_t kMaxManifestBytes = 64u << 20;
inline constexpr std::size_t kMaxDatasetShards = 1'000'000;
inline constexpr std::uint64_t kMaxShardTokens = std::uint64_t{1} << 32;

std::string encode_manifest(const DatasetManifest& manifest);

// Strict inverse of encode_manifest: the exact line and field order, decimal integers without
// signs or leading zeros, lowercase hex digests, single spaces, each line ending in '\n'. Checks
// every rule above (sizes = tokens × token-bytes, full shards but the last, unique names, ...).
// Throws Error(format) naming the line and the problem.
DatasetManifest decode_manifest(std::string_view text);

// The manifest shards holding peer shard `shard` of the training tokens: indices [first, end).
struct ShardSpan {
  std::size_t first = 0;
  std::size_t end = 0;
};
ShardSpan train_shards_of(const DatasetManifest& manifest, ShardSpec shard);

}  // namespace loco::data
