#pragma once
// The data cache's cap (loco-peer's --peer.data-cache-mib), over every dataset in the cache
// folder: before a file is fetched, the least-recently-used files of any dataset (their
// modification time, which a use renews: touch()) are deleted until it fits, never a file in use.

#include <cstdint>
#include <filesystem>
#include <set>

namespace loco::fetch {

// Makes room in `cache` (its files, in folders to any depth) for `bytes` more under `cap`,
// deleting least-recently-used files outside `in_use` (absolute paths). Returns the bytes the
// cache then holds; throws Error(resource) when the files in use leave no room, naming the cap.
std::uint64_t make_room(const std::filesystem::path& cache, std::uint64_t cap, std::uint64_t bytes,
                        const std::set<std::filesystem::path>& in_use);

// Marks `file` used now, so the cap evicts it last.
void touch(const std::filesystem::path& file);

}  // namespace loco::fetch
