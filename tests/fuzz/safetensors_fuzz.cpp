// Fuzz target: safetensors checkpoints (loco/checkpoint/safetensors.hpp) and the strict JSON
// reader behind their header (loco/checkpoint/json.hpp). Every input must either load or be
// refused with loco::Error; a file that loads must hold tensors whose sizes match their shapes.

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "fuzz_seeds.hpp"
#include "loco/checkpoint/json.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;

// A real checkpoint, written by loco to a scratch file and read back as bytes.
Bytes valid_checkpoint() {
  const std::vector<float> w = {1.0f, -2.0f, 3.5f, 0.0f, 1e-20f, 7.0f};
  const std::vector<float> b = {0.5f, 0.25f};
  const std::vector<loco::checkpoint::TensorRef> tensors = {
      {"w", {2, 3}, w}, {"b", {2}, b}, {"empty", {0}, {}}};
  const auto path = std::filesystem::temp_directory_path() /
                    ("loco-fuzz-seed-" + std::to_string(::getpid()) + ".safetensors");
  loco::checkpoint::write_safetensors(path, tensors, {{"step", "3"}, {"note", "\xc3\xa9\n"}});
  std::ifstream in(path, std::ios::binary);
  Bytes bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::filesystem::remove(path);
  return bytes;
}

Bytes from_text(std::string_view text) {
  return {text.begin(), text.end()};
}

// A file as other tools write it: no digest, no __metadata__, data order unlike header order,
// F32, F16 and BF16 tensors.
Bytes digest_less_checkpoint() {
  const std::string header =
      "{\"w\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[4,12]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
      "\"h\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[12,16]}}          ";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());  // 176
  file += header;
  file += std::string(
      "\0\0\x80\x3f"
      "\0\x3c\0\xc0"
      "\x01\0\xff\x7b"
      "\x80\x3f\x40\xc0",
      16);
  return from_text(file);
}

}  // namespace

std::vector<Bytes> loco_fuzz_seeds() {
  return {valid_checkpoint(), digest_less_checkpoint(),
          from_text("{\"__metadata__\":{\"a\":\"\\u00e9\\ud83d\\ude00\"},\"t\":{\"dtype\":\"F32\","
                    "\"shape\":[1,2],\"data_offsets\":[0,8]}}"),
          from_text("[[[-9223372036854775808, 0, 17, \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\"]]]")};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span(data, size));
  try {
    const auto file = loco::checkpoint::SafetensorsFile::parse(bytes, "fuzz-input");
    for (const auto& name : file.names()) {
      const auto& tensor = file.tensor(name);
      std::uint64_t elements = 1;
      for (std::int64_t dim : tensor.shape) elements *= static_cast<std::uint64_t>(dim);
      LOCO_ASSERT(elements == tensor.data.size(), "loaded tensor size disagrees with its shape");
    }
  } catch (const loco::Error&) {
    // Refused with a message: the expected outcome for malformed input.
  }
  try {
    loco::checkpoint::parse_json(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const loco::Error&) {
  }
  return 0;
}
