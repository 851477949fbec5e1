#pragma once
// Writing a file so that a crash or power cut leaves either the old file or the complete new one
// at `path`, never a torn mix: write a temporary file in the same directory, fsync it, rename it
// over `path` (atomic within a file system), then fsync the directory so the rename is durable.

#include <cstddef>
#include <filesystem>
#include <span>

namespace loco::checkpoint {

// Writes the concatenation of `parts` to `path`. Throws Error(io) naming the file and the OS
// reason; on failure the temporary file is removed and `path` is untouched.
void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::span<const std::byte>> parts);

}  // namespace loco::checkpoint
