#include "loco/fetch/cache_cap.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::fetch {
namespace fs = std::filesystem;

namespace {

struct CachedFile {
  fs::path path;
  std::uint64_t bytes = 0;
  fs::file_time_type used;
};

double mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

}  // namespace

std::uint64_t make_room(const fs::path& cache, std::uint64_t cap, std::uint64_t bytes,
                        const std::set<fs::path>& in_use) {
  std::vector<CachedFile> evictable;
  std::uint64_t held = 0, pinned = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(cache, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    CachedFile file{.path = it->path(), .bytes = it->file_size(ec), .used = {}};
    if (ec) continue;  // gone since it was listed
    file.used = it->last_write_time(ec);
    held += file.bytes;
    if (in_use.contains(file.path))
      pinned += file.bytes;
    else
      evictable.push_back(std::move(file));
  }
  if (pinned + bytes > cap)
    throw Error(ErrorCategory::resource,
                fmt::format("data cache '{}': {:.1f} MiB more do not fit under its cap of {:.1f} "
                            "MiB beside the {:.1f} MiB in use (--peer.data-cache-mib)",
                            cache.string(), mib(bytes), mib(cap), mib(pinned)));
  std::ranges::sort(evictable, {}, &CachedFile::used);
  for (const CachedFile& file : evictable) {
    if (held + bytes <= cap) break;
    if (!fs::remove(file.path, ec) || ec) continue;
    held -= file.bytes;
    spdlog::info(
        "data cache: evicted {} ({:.1f} MiB, the least recently used) to stay under {:.1f} MiB",
        file.path.string(), mib(file.bytes), mib(cap));
  }
  if (held + bytes > cap)
    throw Error(ErrorCategory::resource,
                fmt::format("data cache '{}': cannot make room for {:.1f} MiB under its cap of "
                            "{:.1f} MiB (files that could not be deleted)",
                            cache.string(), mib(bytes), mib(cap)));
  return held;
}

void touch(const fs::path& file) {
  std::error_code ec;
  fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
}

}  // namespace loco::fetch
