#pragma once
// Safetensors files as other tools write them (PyTorch's safetensors package, candle, ...): no
// loco digest, tensors in whatever order the caller gives, "__metadata__" only when asked for,
// any dtype name with the caller's raw little-endian bytes. Written by hand, not by loco's
// writer, so tests of the reader do not check loco against itself.

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace loco::test {

struct ForeignTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I64", ...
  std::vector<std::int64_t> shape;
  std::string bytes;  // the data as stored
};

// fp32 values as F32 bytes.
inline std::string f32_bytes(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The file's bytes: header entries in the given order, data in reverse order (so header order
// and data order differ), header padded to 8 bytes as the safetensors package does.
inline std::string foreign_safetensors(const std::vector<ForeignTensor>& tensors,
                                       const std::string& metadata_json = "") {
  std::vector<std::uint64_t> begin(tensors.size());
  std::uint64_t offset = 0;
  for (std::size_t i = tensors.size(); i-- > 0;) {
    begin[i] = offset;
    offset += tensors[i].bytes.size();
  }
  std::string header = "{";
  if (!metadata_json.empty()) header += "\"__metadata__\":" + metadata_json + ",";
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const ForeignTensor& t = tensors[i];
    header +=
        (i > 0 ? ", \"" : "\"") + t.name + "\": {\"dtype\": \"" + t.dtype + "\", \"shape\": [";
    for (std::size_t d = 0; d < t.shape.size(); ++d) {
      header += (d > 0 ? ", " : "") + std::to_string(t.shape[d]);
    }
    header += "], \"data_offsets\": [" + std::to_string(begin[i]) + ", " +
              std::to_string(begin[i] + t.bytes.size()) + "]}";
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  for (std::size_t i = tensors.size(); i-- > 0;) out += tensors[i].bytes;
  return out;
}

inline void write_foreign_safetensors(const std::string& path,
                                      const std::vector<ForeignTensor>& tensors,
                                      const std::string& metadata_json = "") {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      << foreign_safetensors(tensors, metadata_json);
}

}  // namespace loco::test
