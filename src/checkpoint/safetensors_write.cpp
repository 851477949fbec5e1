#include <array>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "content_digest.hpp"
#include "loco/checkpoint/atomic_file.hpp"
#include "loco/checkpoint/json.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"

namespace loco::checkpoint {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and written as it is in memory");

namespace {

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::invalid_argument,
              "writing checkpoint '" + path.string() + "': " + what);
}

void check_tensors(const std::filesystem::path& path, std::span<const TensorRef> tensors) {
  std::set<std::string_view> names;
  for (const TensorRef& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__") refuse(path, "a tensor needs a name");
    if (!names.insert(t.name).second) refuse(path, "two tensors are named '" + t.name + "'");
    std::uint64_t elements = 1;
    for (std::int64_t dim : t.shape) {
      if (dim < 0) refuse(path, "tensor '" + t.name + "' has a negative dimension");
      const auto size = static_cast<std::uint64_t>(dim);
      if (size != 0 && elements > UINT64_MAX / size)
        refuse(path, "tensor '" + t.name + "' is too big");
      elements *= size;
    }
    if (elements != t.data.size()) {
      refuse(path, "tensor '" + t.name + "' has " + std::to_string(t.data.size()) +
                       " values but its shape holds " + std::to_string(elements));
    }
  }
}

std::string integer_array(std::span<const std::int64_t> values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string header_json(std::span<const TensorRef> tensors,
                        std::span<const detail::TableEntry> table, const Metadata& metadata) {
  std::string json = "{\"__metadata__\":{";
  bool first = true;
  for (const auto& [key, value] : metadata) {
    if (!first) json += ",";
    first = false;
    json += json_quote(key);
    json += ':';
    json += json_quote(value);
  }
  json += "}";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const std::int64_t offsets[] = {static_cast<std::int64_t>(table[i].begin),
                                    static_cast<std::int64_t>(table[i].end)};
    // Appended piece by piece: GCC 12 misreports `"literal" + std::string` (-Wrestrict).
    json += ',';
    json += json_quote(tensors[i].name);
    json += ":{\"dtype\":\"F32\",\"shape\":";
    json += integer_array(tensors[i].shape);
    json += ",\"data_offsets\":";
    json += integer_array(offsets);
    json += '}';
  }
  json += "}";
  // Pad with spaces (JSON whitespace) so the data starts 8-byte aligned, as safetensors does.
  json.append((8 - json.size() % 8) % 8, ' ');
  return json;
}

// A file's pieces in order: the header's length, the header, each tensor's bytes (not copied).
struct Pieces {
  std::array<std::byte, 8> length{};
  std::string header;
  std::vector<std::span<const std::byte>> data;

  std::vector<std::span<const std::byte>> parts() const {
    std::vector<std::span<const std::byte>> out = {length, std::as_bytes(std::span(header))};
    out.insert(out.end(), data.begin(), data.end());
    return out;
  }
};

Pieces pieces(const std::filesystem::path& path, std::span<const TensorRef> tensors,
              const Metadata& metadata) {
  check_tensors(path, tensors);
  if (metadata.contains(std::string(kDigestKey))) {
    refuse(path, "the metadata key '" + std::string(kDigestKey) + "' is reserved for the digest");
  }

  std::vector<detail::TableEntry> table;
  std::vector<std::span<const std::byte>> data;
  std::uint64_t offset = 0;
  for (const TensorRef& t : tensors) {
    const std::uint64_t bytes = t.data.size_bytes();
    table.push_back({t.name, t.shape, offset, offset + bytes});
    data.push_back(std::as_bytes(t.data));
    offset += bytes;
  }
  Metadata with_digest = metadata;
  with_digest.emplace(kDigestKey, to_hex(detail::content_digest(metadata, table, data)));
  Pieces out{.length = {}, .header = header_json(tensors, table, with_digest), .data = data};
  for (std::size_t i = 0; i < out.length.size(); ++i) {
    out.length[i] = static_cast<std::byte>(out.header.size() >> (8 * i));
  }
  return out;
}

}  // namespace

void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const Metadata& metadata) {
  write_file_atomically(path, pieces(path, tensors, metadata).parts());
}

std::vector<std::byte> safetensors_bytes(std::span<const TensorRef> tensors,
                                         const Metadata& metadata, std::string_view name) {
  const Pieces file = pieces(name, tensors, metadata);
  std::vector<std::byte> bytes;
  for (std::span<const std::byte> part : file.parts())
    bytes.insert(bytes.end(), part.begin(), part.end());
  return bytes;
}

}  // namespace loco::checkpoint
