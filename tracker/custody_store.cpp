#include "custody_store.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "loco/checkpoint/atomic_file.hpp"
#include "loco/core/error.hpp"

namespace loco::tracker {
namespace {

constexpr std::string_view kPrefix = "round-";
constexpr std::string_view kSuffix = ".custody";
// A file's header (magic, run id, manifest) above its state: a manifest of 64 Ki chunk hashes.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{4} << 20;

std::vector<std::byte> read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::uint64_t size = std::filesystem::file_size(path);
  if (size > max_bytes)
    throw Error(
        ErrorCategory::format,
        fmt::format("custody file {} is {} bytes, above the custody limit", path.string(), size));
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes(size);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw Error(ErrorCategory::io, fmt::format("cannot read custody file {}", path.string()));
  return bytes;
}

}  // namespace

CustodyStore::CustodyStore(std::filesystem::path folder, std::string run_id, CustodyLimits limits)
    : folder_(std::move(folder)), run_id_(std::move(run_id)), limits_(limits) {
  std::error_code error;
  std::filesystem::create_directories(folder_, error);
  if (error)
    throw Error(ErrorCategory::io, fmt::format("cannot make the custody folder {}: {}",
                                               folder_.string(), error.message()));
  scan();
}

std::filesystem::path CustodyStore::path_of(std::uint64_t round) const {
  return folder_ / fmt::format("{}{:020}{}", kPrefix, round, kSuffix);
}

void CustodyStore::scan() {
  for (const auto& item : std::filesystem::directory_iterator(folder_)) {
    const std::string name = item.path().filename().string();
    if (!item.is_regular_file() || !name.starts_with(kPrefix) || !name.ends_with(kSuffix)) continue;
    try {
      proto::CustodyFile f = proto::decode_custody_file(
          read_file(item.path(), limits_.max_state_bytes + kMaxHeaderBytes), item.path().string(),
          limits_.max_state_bytes);
      if (f.run_id != run_id_) {
        spdlog::warn("custody file {} belongs to run '{}', not '{}': left alone",
                     item.path().string(), f.run_id, run_id_);
        continue;
      }
      if (item.path() != path_of(f.manifest.round)) {
        spdlog::warn("custody file {} holds round {}: left alone", item.path().string(),
                     f.manifest.round);
        continue;
      }
      entries_.push_back(proto::CustodyEntry{.round = f.manifest.round,
                                             .state_hash = f.manifest.state_hash(),
                                             .bytes = f.manifest.total_bytes});
      if (!newest_ || f.manifest.round > newest_->manifest.round) newest_ = std::move(f);
    } catch (const Error& e) {
      spdlog::warn("{}: left alone, not served", e.what());
    }
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.round < b.round; });
  if (!entries_.empty())
    spdlog::info("custody: {} copies in {}, the newest of round {} (state {})", entries_.size(),
                 folder_.string(), entries_.back().round,
                 to_hex(entries_.back().state_hash).substr(0, 12));
}

proto::CustodyFile CustodyStore::read(std::uint64_t round) const {
  if (std::none_of(entries_.begin(), entries_.end(),
                   [&](const proto::CustodyEntry& e) { return e.round == round; }))
    throw Error(ErrorCategory::config,
                fmt::format("no custody copy of round {} in {}", round, folder_.string()));
  const std::filesystem::path path = path_of(round);
  return proto::decode_custody_file(read_file(path, limits_.max_state_bytes + kMaxHeaderBytes),
                                    path.string(), limits_.max_state_bytes);
}

void CustodyStore::add(const proto::CustodyCopy& copy) {
  const std::vector<std::byte> header = proto::encode_custody_header(run_id_, copy.manifest);
  const std::span<const std::byte> parts[] = {header, copy.state};
  checkpoint::write_file_atomically(path_of(copy.manifest.round), parts);
  const proto::CustodyEntry entry{.round = copy.manifest.round,
                                  .state_hash = copy.manifest.state_hash(),
                                  .bytes = copy.manifest.total_bytes};
  std::erase_if(entries_, [&](const auto& e) { return e.round == entry.round; });
  entries_.push_back(entry);
  std::sort(entries_.begin(), entries_.end(),
            [](const auto& a, const auto& b) { return a.round < b.round; });
  prune();
}

void CustodyStore::prune() {
  for (const proto::CustodyEntry& e :
       proto::custody_to_prune(entries_, limits_.keep, limits_.max_disk_bytes)) {
    std::error_code error;
    std::filesystem::remove(path_of(e.round), error);
    if (error) {
      spdlog::warn("custody: cannot delete {}: {}", path_of(e.round).string(), error.message());
      continue;
    }
    std::erase_if(entries_, [&](const auto& kept) { return kept.round == e.round; });
  }
}

}  // namespace loco::tracker
