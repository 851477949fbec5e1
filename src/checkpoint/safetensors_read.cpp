#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "content_digest.hpp"
#include "dtypes.hpp"
#include "loco/checkpoint/json.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

using detail::Dtype;

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20;  // the limit safetensors itself applies
constexpr std::size_t kMaxRank = 8;
constexpr JsonLimits kHeaderLimits{.max_bytes = kMaxHeaderBytes, .max_depth = 4};

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// One entry of the tensor table with what the conversion to fp32 needs.
struct Entry {
  detail::TableEntry table;
  Dtype dtype = Dtype::f32;
};

class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(ErrorCategory::format,
                "checkpoint '" + name_ + "' " + what +
                    "; it is truncated, corrupted or not a safetensors file, so use another one");
  }
  [[noreturn]] void fail_io(const std::string& what) const {
    throw Error(ErrorCategory::io,
                "checkpoint '" + name_ + "': " + what + ": " + std::strerror(errno));
  }

  // A tensor entry: exactly dtype, shape and data_offsets, consistent with each other.
  Entry tensor_entry(const std::string& name, const JsonValue& entry,
                     std::vector<std::int64_t>& shape) const {
    const std::string where = "tensor '" + name + "'";
    if (!entry.is_object()) fail("has a " + where + " that is not an object");
    const JsonValue* dtype = entry.find("dtype");
    const JsonValue* dims = entry.find("shape");
    const JsonValue* offsets = entry.find("data_offsets");
    if (!dtype || !dims || !offsets || entry.object().size() != 3) {
      fail("has a " + where + " without exactly dtype, shape and data_offsets");
    }
    const std::optional<Dtype> type =
        dtype->is_string() ? detail::dtype_of(dtype->string()) : std::nullopt;
    if (!type) {
      fail("has a " + where + " of dtype " +
           (dtype->is_string() ? dtype->string() : "(not a string)") +
           "; loco reads only F32, F16, BF16 and F64 (converted to F32)");
    }
    const std::uint64_t element_bytes = detail::bytes_per_element(*type);
    if (!dims->is_array() || dims->array().size() > kMaxRank) {
      fail("has a " + where + " whose shape is not an array of at most 8 dimensions");
    }
    std::uint64_t elements = 1;
    for (const JsonValue& dim : dims->array()) {
      if (!dim.is_integer() || dim.integer() < 0) fail("has a " + where + " with a bad dimension");
      const auto size = static_cast<std::uint64_t>(dim.integer());
      if (size != 0 && elements > (UINT64_MAX / 8) / size) fail("has a " + where + " too big");
      elements *= size;
      shape.push_back(dim.integer());
    }
    if (!offsets->is_array() || offsets->array().size() != 2 || !offsets->array()[0].is_integer() ||
        !offsets->array()[1].is_integer()) {
      fail("has a " + where + " whose data_offsets are not two integers");
    }
    const std::int64_t begin = offsets->array()[0].integer();
    const std::int64_t end = offsets->array()[1].integer();
    if (begin < 0 || end < begin) fail("has a " + where + " with reversed data_offsets");
    if (static_cast<std::uint64_t>(end - begin) != elements * element_bytes) {
      fail("has a " + where + " whose data_offsets do not span its shape × " +
           std::to_string(element_bytes) + " bytes");
    }
    return {{name, shape, static_cast<std::uint64_t>(begin), static_cast<std::uint64_t>(end)},
            *type};
  }

  Metadata metadata(const JsonValue& value) const {
    if (!value.is_object()) fail("has a __metadata__ that is not an object");
    Metadata out;
    for (const auto& [key, text] : value.object()) {
      if (!text.is_string()) fail("has a __metadata__ value that is not a string");
      out.emplace(key, text.string());
    }
    return out;
  }

  // Sorts `table` into data order and checks that it covers [0, data_size) exactly: contiguous,
  // non-overlapping, no gap, nothing after. Ties (empty tensors) keep their header order.
  void check_tiling(std::vector<Entry>& entries, std::uint64_t data_size) const {
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.table.begin != b.table.begin ? a.table.begin < b.table.begin
                                            : a.table.end < b.table.end;
    });
    std::uint64_t expected_begin = 0;
    for (const Entry& entry : entries) {
      if (entry.table.begin != expected_begin) {
        fail("has tensor '" + std::string(entry.table.name) +
             "' overlapping or leaving a gap before it in the data");
      }
      expected_begin = entry.table.end;
    }
    if (expected_begin != data_size) {
      fail("has " + std::to_string(data_size) + " bytes of data but its tensors cover " +
           std::to_string(expected_begin));
    }
  }

 private:
  std::string name_;
};

}  // namespace

// Where the bytes come from: a file or a buffer, read front to back.
struct SafetensorsFile::Source {
  std::string name;                                        // the file, for messages
  std::uint64_t size = 0;                                  // total bytes
  std::function<bool(void* out, std::size_t bytes)> read;  // exactly `bytes`, or false
};

namespace {

using ReadExactly = std::function<void(void* out, std::size_t bytes)>;

// Step 1: the header, its length checked against the file before the header is read.
std::string read_header(const Reader& reader, std::uint64_t file_size,
                        const ReadExactly& read_exactly) {
  if (file_size < 8) reader.fail("is " + std::to_string(file_size) + " bytes, too short");
  unsigned char length_bytes[8];
  read_exactly(length_bytes, 8);
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length_bytes[i];
  if (header_size > file_size - 8) {
    reader.fail("declares a " + std::to_string(header_size) + "-byte header but has only " +
                std::to_string(file_size - 8) + " bytes after the length");
  }
  if (header_size > kMaxHeaderBytes) reader.fail("declares a header over 100 MB");
  std::string header(header_size, '\0');
  read_exactly(header.data(), header.size());
  return header;
}

// Step 2: the header parsed, every entry checked. The entries point into `json` and `shapes`.
std::vector<Entry> tensor_entries(const Reader& reader, const JsonValue& json,
                                  std::vector<std::vector<std::int64_t>>& shapes,
                                  Metadata& metadata) {
  if (!json.is_object()) reader.fail("has a header that is not a JSON object");
  std::vector<Entry> entries;
  shapes.resize(json.object().size());
  for (std::size_t i = 0; i < json.object().size(); ++i) {
    const auto& [name, entry] = json.object()[i];
    if (name == "__metadata__") {
      metadata = reader.metadata(entry);
    } else {
      entries.push_back(reader.tensor_entry(name, entry, shapes[i]));
    }
  }
  return entries;
}

// Step 4: the digest, when the file has one (loco's own files do; other tools' do not), taken
// out of the metadata; it must be well-formed.
std::optional<std::string> take_digest(const Reader& reader, Metadata& metadata) {
  const auto digest = metadata.find(std::string(kDigestKey));
  if (digest == metadata.end()) return std::nullopt;
  if (digest->second.size() != 64) {
    reader.fail("has a malformed '" + std::string(kDigestKey) + "' digest in its metadata");
  }
  std::string stored = digest->second;
  metadata.erase(digest);
  return stored;
}

}  // namespace

SafetensorsFile SafetensorsFile::load(Source& source) {
  const Reader reader(source.name);
  const std::uint64_t file_size = source.size;
  const ReadExactly read_exactly = [&](void* out, std::size_t bytes) {
    if (bytes > 0 && !source.read(out, bytes))
      reader.fail("ended early (was it changed while read?)");
  };
  const std::string header = read_header(reader, file_size, read_exactly);

  SafetensorsFile out;
  out.name_ = source.name;
  const JsonValue json = [&] {
    try {
      return parse_json(header, kHeaderLimits);
    } catch (const Error& e) {
      reader.fail(std::string("has a malformed header: ") + e.what());
    }
  }();
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<Entry> entries = tensor_entries(reader, json, shapes, out.metadata_);

  // 3. Offsets: in data order they must tile the data section exactly.
  const std::uint64_t data_size = file_size - 8 - header.size();
  reader.check_tiling(entries, data_size);
  const std::optional<std::string> stored_digest = take_digest(reader, out.metadata_);

  // 5. The data: read straight into the fp32 buffer when every tensor is F32, else read as
  // stored and converted tensor by tensor. Sizes are bounded by the file's (checked above).
  std::uint64_t elements = 0;
  std::vector<detail::TableEntry> table;
  for (const Entry& e : entries) {
    elements += (e.table.end - e.table.begin) / detail::bytes_per_element(e.dtype);
    table.push_back(e.table);
  }
  const bool all_f32 = std::all_of(entries.begin(), entries.end(),
                                   [](const Entry& e) { return e.dtype == Dtype::f32; });
  out.buffer_.resize(elements);
  std::vector<std::byte> stored;  // the data as stored, when some tensor needs converting
  std::span<const std::byte> data;
  if (all_f32) {
    read_exactly(out.buffer_.data(), data_size);
    data = std::as_bytes(std::span(out.buffer_));
  } else {
    stored.resize(data_size);
    read_exactly(stored.data(), data_size);
    data = stored;
  }
  if (stored_digest &&
      to_hex(detail::content_digest(out.metadata_, table, std::span(&data, 1))) != *stored_digest) {
    reader.fail("does not match its digest: it was modified after it was written");
  }
  out.has_digest_ = stored_digest.has_value();

  std::uint64_t first = 0;  // of the tensor's values in buffer_
  for (const auto& [entry, dtype] : entries) {
    const std::uint64_t count = (entry.end - entry.begin) / detail::bytes_per_element(dtype);
    const std::span<float> values = std::span(out.buffer_).subspan(first, count);
    if (!all_f32) {
      detail::convert_to_f32(dtype, data.subspan(entry.begin, entry.end - entry.begin), values);
    }
    const std::string name(entry.name);
    out.tensors_.emplace(
        name, Tensor{std::vector<std::int64_t>(entry.shape.begin(), entry.shape.end()), values});
    out.names_.push_back(name);
    first += count;
  }
  return out;
}

SafetensorsFile SafetensorsFile::read(const std::filesystem::path& path) {
  const Reader reader(path.string());
  File file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) reader.fail_io("cannot open");
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) reader.fail_io("cannot get its size");
  Source source{path.string(), size, [&](void* out, std::size_t bytes) {
                  if (std::fread(out, 1, bytes, file.get()) == bytes) return true;
                  if (std::ferror(file.get())) reader.fail_io("read failed");
                  return false;
                }};
  return load(source);
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::byte> bytes, std::string_view name) {
  std::size_t position = 0;
  Source source{std::string(name), bytes.size(), [&](void* out, std::size_t count) {
                  if (bytes.size() - position < count) return false;
                  std::memcpy(out, bytes.data() + position, count);
                  position += count;
                  return true;
                }};
  return load(source);
}

bool SafetensorsFile::contains(std::string_view name) const {
  return tensors_.find(name) != tensors_.end();
}

const SafetensorsFile::Tensor& SafetensorsFile::tensor(std::string_view name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) {
    throw Error(ErrorCategory::format,
                "checkpoint '" + name_ + "' has no tensor '" + std::string(name) + "'");
  }
  return it->second;
}

void SafetensorsFile::copy_to(std::string_view name, std::span<float> out) const {
  const Tensor& t = tensor(name);
  if (t.data.size() != out.size()) {
    throw Error(ErrorCategory::format, "checkpoint '" + name_ + "' tensor '" + std::string(name) +
                                           "' has " + std::to_string(t.data.size()) +
                                           " values, expected " + std::to_string(out.size()));
  }
  std::copy(t.data.begin(), t.data.end(), out.begin());
}

}  // namespace loco::checkpoint
