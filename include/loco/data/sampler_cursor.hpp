#pragma once
// Where a BatchSampler stands, as a short line of text for checkpoint metadata:
//
//   loco-cursor/1 shard=2/4 tokens=1000000 context=128 batch=16 seed=7 epoch=3 position=1234
//
// Besides the position it records everything the position depends on, so that a cursor saved
// under one shard, file or config cannot be restored silently under another.

#include <cstdint>
#include <string>
#include <string_view>

namespace loco::data {

struct ShardSpec {
  std::uint32_t index = 0;  // this peer's shard, < count
  std::uint32_t count = 1;  // how many shards the token file is cut into
  bool operator==(const ShardSpec&) const = default;
};

struct SamplerCursor {
  std::uint64_t epoch = 0;     // how many full passes over the shard's windows are done
  std::uint64_t position = 0;  // windows drawn so far in this epoch
  bool operator==(const SamplerCursor&) const = default;
};

struct CursorRecord {
  ShardSpec shard;
  std::uint64_t tokens = 0;  // length of the whole token file
  std::uint32_t context = 0;
  std::uint32_t batch_size = 0;
  std::uint64_t seed = 0;
  SamplerCursor at;
  bool operator==(const CursorRecord&) const = default;
};

std::string encode_cursor(const CursorRecord& record);

// Strict inverse of encode_cursor: the exact field order, decimal integers without signs or
// leading zeros, single spaces. Throws Error(format) naming the first bad field.
CursorRecord decode_cursor(std::string_view text);

}  // namespace loco::data
