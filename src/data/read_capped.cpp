#include "read_capped.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "loco/core/error.hpp"

namespace loco::data {

std::string read_capped(const std::filesystem::path& path, std::uint64_t max_bytes,
                        const char* what) {
  const auto fail_io = [&](const char* doing) {
    return Error(ErrorCategory::io, std::string(what) + " '" + path.string() + "': cannot " +
                                        doing + ": " + std::strerror(errno));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail_io("open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw fail_io("stat");
  if (!S_ISREG(info.st_mode))
    throw Error(ErrorCategory::format,
                std::string(what) + " '" + path.string() + "' is not a regular file");
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes)
    throw Error(ErrorCategory::format, std::string(what) + " '" + path.string() + "' has " +
                                           std::to_string(size) + " bytes, more than the " +
                                           std::to_string(max_bytes) + " allowed");
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const ::ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail_io("read");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  if (done != size)
    throw Error(ErrorCategory::io,
                std::string(what) + " '" + path.string() + "' shrank while read");
  return bytes;
}

}  // namespace loco::data
