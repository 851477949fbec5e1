#include "loco/train/train_state_file.hpp"

#include <charconv>
#include <sstream>
#include <vector>

#include "loco/checkpoint/arena_tensors.hpp"
#include "loco/checkpoint/safetensors.hpp"
#include "loco/core/error.hpp"

namespace loco::train {
namespace {

constexpr const char* kFormat = "loco-state/1";
constexpr const char* kCounterPrefix = "loco.counter.";

std::string tensor_prefix(const std::string& prefix) {
  return prefix.empty() ? "" : prefix + ".";
}

std::uint64_t parse_u64(const checkpoint::Metadata& metadata, const std::string& key,
                        const std::filesystem::path& path) {
  const auto it = metadata.find(key);
  std::uint64_t value = 0;
  if (it == metadata.end() ||
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), value).ec !=
          std::errc{}) {
    throw Error(ErrorCategory::format, "checkpoint '" + path.string() + "': metadata '" + key +
                                           "' is missing or not a number");
  }
  return value;
}

// The first line where two identities differ, for the error message.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (la != lb || ga != gb) return "checkpoint has '" + lb + "', this run has '" + la + "'";
  }
}

}  // namespace

void save_train_state(const std::filesystem::path& path, const std::vector<NamedArena>& arenas,
                      const StateFileValues& values, const std::string& identity) {
  std::vector<checkpoint::TensorRef> tensors;
  for (const NamedArena& a : arenas)
    checkpoint::append_arena(tensors, *a.arena, tensor_prefix(a.prefix));
  checkpoint::Metadata metadata{
      {"loco.format", kFormat}, {"loco.cursor", values.cursor}, {"loco.config", identity}};
  for (const auto& [name, value] : values.counters)
    metadata.emplace(kCounterPrefix + name, std::to_string(value));
  checkpoint::write_safetensors(path, tensors, metadata);
}

StateFileValues load_train_state(const std::filesystem::path& path,
                                 const std::vector<NamedArena>& arenas,
                                 const std::vector<std::string>& counters,
                                 const std::string& identity) {
  const auto file = checkpoint::SafetensorsFile::read(path);
  const auto& metadata = file.metadata();
  const auto format = metadata.find("loco.format");
  if (format == metadata.end() || format->second != kFormat || !file.has_digest()) {
    throw Error(ErrorCategory::format,
                "'" + path.string() + "' is not a loco training checkpoint (no loco.format = " +
                    kFormat + " or no digest; use a model from elsewhere with --init)");
  }
  const auto config = metadata.find("loco.config");
  if (config == metadata.end() || config->second != identity) {
    throw Error(ErrorCategory::config,
                "checkpoint '" + path.string() +
                    "' was written by a run with other model or data "
                    "options (" +
                    first_difference(identity, config == metadata.end() ? "" : config->second) +
                    "); resume with the options it was trained with");
  }
  const auto cursor = metadata.find("loco.cursor");
  if (cursor == metadata.end()) {
    throw Error(ErrorCategory::format, "checkpoint '" + path.string() + "' has no loco.cursor");
  }
  for (const NamedArena& a : arenas)
    checkpoint::load_arena(file, *a.arena, tensor_prefix(a.prefix));
  StateFileValues values{.counters = {}, .cursor = cursor->second};
  for (const std::string& name : counters)
    values.counters[name] = parse_u64(metadata, kCounterPrefix + name, path);
  return values;
}

}  // namespace loco::train
