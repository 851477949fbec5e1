#include "loco/train/genesis_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "loco/checkpoint/atomic_file.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/bf16.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"

namespace loco::train {
namespace {

std::vector<std::byte> genesis_bytes(const std::filesystem::path& path) {
  const auto fail = [&](const std::string& what) {
    throw Error(ErrorCategory::io,
                fmt::format("genesis file '{}' (model.genesis): {}", path.string(), what));
  };
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot open: ") + std::strerror(errno));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot get its size: " + ec.message());
  std::vector<std::byte> bytes(size);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)) ||
      in.peek() != std::ifstream::traits_type::eof())
    fail("not read whole (a file that changed while read, or not a regular file)");
  return bytes;
}

[[noreturn]] void refuse_genesis(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::format,
              fmt::format("genesis file '{}' (model.genesis) {}", path.string(), what));
}

// A TOML basic string.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

bool has_control_character(std::string_view name) {
  return std::ranges::any_of(
      name, [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

constexpr std::size_t kMaxRank = 8;  // what checkpoint's safetensors reader takes

// The tensor's element count. Throws Error(invalid_argument) for a shape the file cannot hold.
std::size_t checked_numel(const GenesisTensor& t) {
  const auto refuse = [&](const std::string& what) {
    throw Error(ErrorCategory::invalid_argument, fmt::format("tensor {}: {}", t.name, what));
  };
  if (t.data == nullptr) refuse("no data");
  if (has_control_character(t.name)) refuse("a control character in its name");
  if (t.shape.size() > kMaxRank) refuse(fmt::format("rank {}, above {}", t.shape.size(), kMaxRank));
  std::size_t numel = 1;
  for (const std::size_t d : t.shape) {
    if (d == 0) refuse("a dimension of 0 (a tensor with no elements has no place in a genesis)");
    if (numel > (SIZE_MAX / sizeof(float)) / d) refuse("too big");
    numel *= d;
  }
  return numel;
}

}  // namespace

Genesis read_genesis(const std::filesystem::path& path, const std::string& blake2b_hex) {
  const std::vector<std::byte> bytes = genesis_bytes(path);
  const std::string hash = to_hex(blake2b(bytes));
  if (hash != blake2b_hex)
    throw Error(ErrorCategory::config,
                fmt::format("model.genesis-blake2b: the genesis file '{}' hashes to {}, not {}: "
                            "it is another file than the run's, or it changed",
                            path.string(), hash, blake2b_hex));
  const checkpoint::SafetensorsFile file = checkpoint::SafetensorsFile::parse(bytes, path.string());
  if (file.names().empty()) refuse_genesis(path, "holds no tensor");
  if (file.names().size() > kMaxGenesisTensors)
    refuse_genesis(path, fmt::format("holds {} tensors, more than loco takes ({})",
                                     file.names().size(), kMaxGenesisTensors));
  std::vector<TensorSpec> specs;
  for (const std::string& name : file.names()) {
    if (has_control_character(name))  // it would go into logs and messages as it is
      refuse_genesis(path, "has a tensor name with a control character");
    const std::vector<std::int64_t>& shape = file.tensor(name).shape;
    if (file.tensor(name).data.empty())
      refuse_genesis(path,
                     fmt::format("has tensor '{}' with no elements; leave it out of the model's "
                                 "genesis",
                                 name));
    specs.push_back({name, std::vector<std::size_t>(shape.begin(), shape.end())});
  }
  std::shared_ptr<const ArenaLayout> layout;
  try {
    layout = std::make_shared<const ArenaLayout>(std::move(specs));
  } catch (const Error& e) {  // an empty name, a size that overflows
    refuse_genesis(path, "cannot be laid out: " + e.message());
  }
  Genesis out{.layout = layout, .params = Arena(layout)};
  for (std::size_t i = 0; i < file.names().size(); ++i)
    file.copy_to(file.names()[i], out.params.tensor(i));
  return out;
}

std::string write_genesis(const std::filesystem::path& path,
                          std::span<const GenesisTensor> tensors) {
  if (tensors.empty() || tensors.size() > kMaxGenesisTensors)
    throw Error(ErrorCategory::invalid_argument,
                fmt::format("genesis file '{}': {} tensors; a model has 1 to {}", path.string(),
                            tensors.size(), kMaxGenesisTensors));
  std::vector<checkpoint::TensorRef> refs;
  std::vector<std::vector<float>> widened;  // the bf16 tensors, as fp32
  widened.reserve(tensors.size());
  for (const GenesisTensor& t : tensors) {
    const std::size_t numel = checked_numel(t);
    std::span<const float> values;
    if (t.bf16) {
      const auto* in = static_cast<const std::uint16_t*>(t.data);
      std::vector<float>& out = widened.emplace_back(numel);
      for (std::size_t k = 0; k < numel; ++k) out[k] = bf16_to_float(in[k]);
      values = out;
    } else {
      values = std::span(static_cast<const float*>(t.data), numel);
    }
    refs.push_back(
        {std::string(t.name), std::vector<std::int64_t>(t.shape.begin(), t.shape.end()), values});
  }
  // One copy of the model in memory, so that the hash is of the bytes written.
  const std::vector<std::byte> bytes = checkpoint::safetensors_bytes(refs, {}, path.string());
  const std::span<const std::byte> parts[] = {bytes};
  checkpoint::write_file_atomically(path, parts);
  return to_hex(blake2b(bytes));
}

std::string genesis_config_lines(const std::filesystem::path& path,
                                 const std::string& blake2b_hex) {
  // The file's name: a relative path in a run config is read from the config's folder, where the
  // organiser ships the file beside it (each peer and the tracker have their own copy).
  return fmt::format(
      "[model]\nkind = \"external\"\ngenesis = {}  # beside the run config\n"
      "genesis-blake2b = \"{}\"\n",
      toml_string(path.filename().string()), blake2b_hex);
}

}  // namespace loco::train
