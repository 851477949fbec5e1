#include "loco/train/init_params.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"

namespace loco::train {
namespace {

template <typename Dims>
std::string shape_text(const Dims& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

// nanoGPT's causal mask, a buffer (not a parameter) its state dict holds under torch < 2.0:
// transformer.h.<l>.attn.bias of shape [1, 1, block_size, block_size]. Skipped.
bool is_causal_mask(const std::string& name, const std::vector<std::int64_t>& shape) {
  return name.starts_with("transformer.h.") && name.ends_with(".attn.bias") && shape.size() == 4 &&
         shape[0] == 1 && shape[1] == 1 && shape[2] == shape[3];
}

[[noreturn]] void fail(const checkpoint::SafetensorsFile& file, const std::string& what) {
  throw Error(ErrorCategory::format, "init file '" + file.name() + "' " + what);
}

}  // namespace

void load_init_params(const std::filesystem::path& path, Arena& params) {
  const checkpoint::SafetensorsFile file = checkpoint::SafetensorsFile::read(path);
  const ArenaLayout& layout = params.layout();
  auto in_model = [&](const std::string& name) {
    return std::any_of(layout.tensors().begin(), layout.tensors().end(),
                       [&](const auto& t) { return t.name == name; });
  };
  const bool tied = in_model(kTokenEmbeddingName);
  for (const std::string& name : file.names()) {
    if (!in_model(name) && !(tied && name == kTiedHeadName) &&
        !is_causal_mask(name, file.tensor(name).shape)) {
      fail(file, "has tensor '" + name + "', which the model does not have (another model?)");
    }
  }

  for (std::size_t i = 0; i < layout.tensors().size(); ++i) {
    const auto& spec = layout.tensors()[i];
    std::string name = spec.name;
    if (tied && name == kTokenEmbeddingName && !file.contains(name)) name = kTiedHeadName;
    if (!file.contains(name)) {
      fail(file,
           "has no tensor '" + spec.name + "' (the model's is " + shape_text(spec.shape) + ")");
    }
    const checkpoint::SafetensorsFile::Tensor& stored = file.tensor(name);
    if (!std::equal(
            stored.shape.begin(), stored.shape.end(), spec.shape.begin(), spec.shape.end(),
            [](std::int64_t a, std::size_t b) { return static_cast<std::size_t>(a) == b; })) {
      fail(file, "has tensor '" + name + "' of shape " + shape_text(stored.shape) + ", expected " +
                     shape_text(spec.shape));
    }
    std::copy(stored.data.begin(), stored.data.end(), params.tensor(i).begin());
  }

  if (tied && file.contains(kTokenEmbeddingName) && file.contains(kTiedHeadName)) {
    const auto& head = file.tensor(kTiedHeadName);
    const auto& embedding = file.tensor(kTokenEmbeddingName);
    if (head.shape != embedding.shape ||
        !std::equal(head.data.begin(), head.data.end(), embedding.data.begin())) {
      fail(file, "has a '" + std::string(kTiedHeadName) + "' unlike its '" + kTokenEmbeddingName +
                     "'; loco ties the two, so they must be equal");
    }
  }
}

std::string init_file_digest(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorCategory::io,
                "init file '" + path.string() + "': cannot open: " + std::strerror(errno));
  }
  Blake2b hash;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    hash.update(std::as_bytes(std::span(chunk.data(), static_cast<std::size_t>(in.gcount()))));
  }
  if (in.bad()) throw Error(ErrorCategory::io, "init file '" + path.string() + "': read failed");
  return to_hex(hash.finish());
}

}  // namespace loco::train
