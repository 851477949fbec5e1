#include "loco/checkpoint/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

[[noreturn]] void fail_io(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::io,
              "writing '" + path.string() + "': " + what + ": " + std::strerror(errno));
}

// A name no other writer in this or another process uses at the same time.
std::filesystem::path temporary_name(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> counter{0};
  return path.string() + ".tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter.fetch_add(1));
}

void write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      fail_io(path, "write failed");
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
  }
}

void sync_directory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_io(directory, "cannot open the directory to sync it");
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) fail_io(directory, "cannot sync the directory");
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::span<const std::byte>> parts) {
  const std::filesystem::path temporary = temporary_name(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail_io(temporary, "cannot create the temporary file");
  // Removes the temporary file, keeping errno for the message.
  auto remove_temporary = [&] {
    const int saved = errno;
    ::unlink(temporary.c_str());
    errno = saved;
  };
  try {
    for (const auto& part : parts) write_all(fd, part, temporary);
    if (::fsync(fd) != 0) fail_io(temporary, "cannot sync");
  } catch (...) {
    ::close(fd);
    remove_temporary();
    throw;
  }
  if (::close(fd) != 0) {
    remove_temporary();
    fail_io(temporary, "cannot close");
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    remove_temporary();
    fail_io(path, "cannot rename the temporary file into place");
  }
  const std::filesystem::path directory = path.parent_path().empty() ? "." : path.parent_path();
  sync_directory(directory);
}

}  // namespace loco::checkpoint
