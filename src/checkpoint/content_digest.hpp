#pragma once
// The digest loco stores in a safetensors file's metadata under "loco.blake2b" (private to the
// checkpoint module; the definition is in docs/FORMATS.md). It covers the metadata, the tensor
// table and the data, so changing any byte that matters to a reader changes the digest.

#include <cstdint>
#include <span>
#include <string_view>

#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/hash.hpp"

namespace loco::checkpoint::detail {

struct TableEntry {
  std::string_view name;
  std::span<const std::int64_t> shape;
  std::uint64_t begin = 0;  // data offsets, relative to the start of the data
  std::uint64_t end = 0;
};

// `metadata` must not contain the digest key; `table` is in data order; `data` is the data
// section, in as many pieces as convenient.
Digest content_digest(const Metadata& metadata, std::span<const TableEntry> table,
                      std::span<const std::span<const std::byte>> data);

}  // namespace loco::checkpoint::detail
