#pragma once
// A whole small file in memory, its size checked against a cap before anything is allocated.

#include <cstdint>
#include <filesystem>
#include <string>

namespace loco::data {

// Throws Error(io) when `path` cannot be opened or read, Error(format) when it is not a regular
// file or is larger than `max_bytes` (the message calls it `what`).
std::string read_capped(const std::filesystem::path& path, std::uint64_t max_bytes,
                        const char* what);

}  // namespace loco::data
