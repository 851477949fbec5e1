#pragma once
// Checkpoints as safetensors files (https://huggingface.co/docs/safetensors), readable by numpy
// and PyTorch tools:
//
//   [8 bytes: N, the header length, little-endian u64]
//   [N bytes: JSON header, padded with spaces so the data starts at a multiple of 8]
//   [data: the tensors' bytes, back to back]
//
// The header maps each tensor name to {"dtype":"F32","shape":[...],"data_offsets":[begin,end]}
// (offsets relative to the data) and, optionally, "__metadata__" to a map of strings. loco writes
// only fp32 tensors and adds the metadata entry "loco.blake2b": the BLAKE2b-256 digest, in hex, of
// the metadata, the tensor table and the data (see docs/FORMATS.md), so a tampered or corrupted
// loco file is refused on read. Files other tools wrote have no digest and are read all the same;
// their F16, BF16 and F64 tensors are converted to fp32 (other dtypes are refused).
//
// Writes are atomic (atomic_file.hpp). Reads validate the whole header against the file size
// before allocating anything.

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loco::checkpoint {

using Metadata = std::map<std::string, std::string>;

// The metadata key under which loco stores the content digest. Callers must not set it.
inline constexpr std::string_view kDigestKey = "loco.blake2b";

// One tensor to write: its bytes are read straight from `data` (no copy).
struct TensorRef {
  std::string name;
  std::vector<std::int64_t> shape;  // product of the dims must equal data.size(); {} = scalar
  std::span<const float> data;
};

// Writes `tensors` (in this order) and `metadata` to `path`, atomically. Throws
// Error(invalid_argument) for duplicate or empty names, a shape that does not match its data,
// invalid UTF-8 in a name or string, or a metadata key "loco.blake2b" or "__metadata__" name;
// Error(io) when the file cannot be written.
void write_safetensors(const std::filesystem::path& path, std::span<const TensorRef> tensors,
                       const Metadata& metadata);
// The same file's bytes in memory (one copy of the tensors' data), for a file served rather than
// written; `name` stands for the file in error messages.
std::vector<std::byte> safetensors_bytes(std::span<const TensorRef> tensors,
                                         const Metadata& metadata, std::string_view name);

// A checkpoint read back into memory: one buffer holds all tensor data.
class SafetensorsFile {
 public:
  struct Tensor {
    std::vector<std::int64_t> shape;
    std::span<const float> data;  // points into the file's buffer; converted to fp32
  };

  // Reads and validates `path`. Throws Error(io) when it cannot be read and Error(format),
  // naming the file and the problem, when it is truncated, malformed, has a tensor of a dtype
  // other than F32, F16, BF16 or F64 (naming the tensor and dtype), or has a digest that is
  // malformed or does not match (tampered or corrupted). A file without a digest is accepted.
  static SafetensorsFile read(const std::filesystem::path& path);
  // The same from a file's bytes already in memory (e.g. received from a peer); `name` stands
  // for the file in error messages.
  static SafetensorsFile parse(std::span<const std::byte> bytes, std::string_view name);

  // Movable (the tensors' spans move with the buffer), not copyable.
  SafetensorsFile(SafetensorsFile&&) = default;
  SafetensorsFile& operator=(SafetensorsFile&&) = default;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& name() const { return name_; }       // the file, as given
  const Metadata& metadata() const { return metadata_; }  // without the digest entry
  // True when the file carried loco's digest (which then matched): every file loco writes does.
  bool has_digest() const { return has_digest_; }
  // Tensor names in data order.
  const std::vector<std::string>& names() const { return names_; }
  bool contains(std::string_view name) const;
  // Throws Error(format) naming the file when there is no tensor `name`.
  const Tensor& tensor(std::string_view name) const;
  // Copies tensor `name` into `out`; throws Error(format) when it is missing or its element
  // count differs from out.size().
  void copy_to(std::string_view name, std::span<float> out) const;

 private:
  struct Source;
  static SafetensorsFile load(Source& source);
  SafetensorsFile() = default;

  std::string name_;  // the file, for messages
  Metadata metadata_;
  bool has_digest_ = false;
  std::vector<std::string> names_;
  std::map<std::string, Tensor, std::less<>> tensors_;
  std::vector<float> buffer_;
};

}  // namespace loco::checkpoint
