#pragma once
// fetch/'s own: a download's .part file, and a file's BLAKE2b when it has the expected size.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

#include "loco/core/hash.hpp"

namespace loco::fetch {

// Throws Error(io) naming `path` and errno's reason.
[[noreturn]] void fail_io(const std::filesystem::path& path, const char* what);

// The BLAKE2b-256 of a file's bytes, or nothing when it is not `bytes` long.
std::optional<Digest> digest_if_sized(const std::filesystem::path& path, std::uint64_t bytes);

// A .part file, written at its end (a server that ignored the Range starts it over: truncate).
class PartFile {
 public:
  explicit PartFile(const std::filesystem::path& path);  // opened or created; throws Error(io)
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  std::uint64_t size() const { return size_; }
  void truncate(std::uint64_t at);
  void append(std::span<const char> bytes);
  void sync();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Writes `text` to `path` through a .part file renamed into place.
void write_file_atomically(const std::filesystem::path& path, std::span<const char> text);

}  // namespace loco::fetch
