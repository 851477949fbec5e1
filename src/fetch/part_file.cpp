#include "part_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "loco/core/error.hpp"

namespace loco::fetch {
namespace fs = std::filesystem;

void fail_io(const fs::path& path, const char* what) {
  throw Error(ErrorCategory::io,
              "data cache '" + path.string() + "': " + what + ": " + std::strerror(errno));
}

std::optional<Digest> digest_if_sized(const fs::path& path, std::uint64_t bytes) {
  std::error_code ec;
  if (fs::file_size(path, ec) != bytes || ec) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  Blake2b hasher;
  std::vector<char> chunk(std::size_t{1} << 20);
  std::uint64_t read = 0;
  while (in && read < bytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    hasher.update(std::as_bytes(std::span(chunk.data(), n)));
    read += n;
  }
  if (read != bytes) return std::nullopt;
  return hasher.finish();
}

PartFile::PartFile(const fs::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_io(path, "cannot open");
  const off_t end = ::lseek(fd_, 0, SEEK_END);
  if (end < 0) {
    ::close(fd_);
    fail_io(path, "cannot seek");
  }
  size_ = static_cast<std::uint64_t>(end);
}

PartFile::~PartFile() {
  ::close(fd_);
}

void PartFile::truncate(std::uint64_t at) {
  if (::ftruncate(fd_, static_cast<off_t>(at)) != 0) fail_io(path_, "cannot truncate");
  size_ = at;
}

void PartFile::append(std::span<const char> bytes) {
  for (std::size_t done = 0; done < bytes.size();) {
    const ::ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_io(path_, "cannot write (is the disk full?)");
    done += static_cast<std::size_t>(n);
  }
  size_ += bytes.size();
}

void PartFile::sync() {
  if (::fsync(fd_) != 0) fail_io(path_, "cannot sync");
}

void write_file_atomically(const fs::path& path, std::span<const char> text) {
  const fs::path part = path.string() + ".part";
  {
    PartFile out(part);
    out.truncate(0);
    out.append(text);
    out.sync();
  }
  fs::rename(part, path);
}

}  // namespace loco::fetch
