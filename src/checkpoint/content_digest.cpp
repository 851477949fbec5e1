#include "content_digest.hpp"

namespace loco::checkpoint::detail {
namespace {

void update_string(Blake2b& hash, std::string_view text) {
  hash.update_u64(text.size());
  hash.update(std::as_bytes(std::span(text.data(), text.size())));
}

}  // namespace

Digest content_digest(const Metadata& metadata, std::span<const TableEntry> table,
                      std::span<const std::span<const std::byte>> data) {
  Blake2b hash;
  hash.update_u64(metadata.size());
  for (const auto& [key, value] : metadata) {  // std::map: sorted by key bytes
    update_string(hash, key);
    update_string(hash, value);
  }
  hash.update_u64(table.size());
  for (const TableEntry& entry : table) {
    update_string(hash, entry.name);
    hash.update_u64(entry.shape.size());
    for (std::int64_t dim : entry.shape) hash.update_u64(static_cast<std::uint64_t>(dim));
    hash.update_u64(entry.begin);
    hash.update_u64(entry.end);
  }
  for (const auto& piece : data) hash.update(piece);
  return hash.finish();
}

}  // namespace loco::checkpoint::detail
