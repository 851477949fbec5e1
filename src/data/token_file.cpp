#include "loco/data/token_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "loco/core/error.hpp"

namespace loco::data {

static_assert(std::endian::native == std::endian::little,
              "token files are little-endian and mapped as they are");

namespace {

[[noreturn]] void fail_io(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::io,
              "token file '" + path.string() + "': " + what + ": " + std::strerror(errno));
}

[[noreturn]] void fail_format(const std::filesystem::path& path, const std::string& what) {
  throw Error(ErrorCategory::format, "token file '" + path.string() + "' " + what);
}

}  // namespace

TokenFile::TokenFile(const std::filesystem::path& path, std::uint32_t vocab_size) : path_(path) {
  if (vocab_size < 1 || vocab_size > 65536) {
    throw Error(ErrorCategory::invalid_argument,
                "token file '" + path.string() + "': vocab_size must be in 1..65536");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_io(path, "cannot open");
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    fail_io(path, "cannot stat");
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    fail_format(path, "is not a regular file");
  }
  const auto bytes = static_cast<std::size_t>(info.st_size);
  if (bytes == 0) {
    ::close(fd);
    fail_format(path, "is empty; expected little-endian uint16 tokens");
  }
  if (bytes % 2 != 0) {
    ::close(fd);
    fail_format(path, "has an odd length (" + std::to_string(bytes) +
                          " bytes); expected little-endian uint16 tokens");
  }
  void* mapped = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file alive
  if (mapped == MAP_FAILED) fail_io(path, "cannot map");
  data_ = static_cast<const std::uint16_t*>(mapped);
  size_ = bytes / 2;

  for (std::size_t i = 0; i < size_; ++i) {
    if (data_[i] >= vocab_size) {
      const std::string message = "holds token " + std::to_string(data_[i]) + " at position " +
                                  std::to_string(i) + ", outside the vocabulary of " +
                                  std::to_string(vocab_size) + " tokens";
      unmap();
      fail_format(path, message);
    }
  }
}

TokenFile::~TokenFile() {
  unmap();
}

TokenFile::TokenFile(TokenFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void TokenFile::unmap() noexcept {
  if (data_ != nullptr) {
    ::munmap(const_cast<std::uint16_t*>(data_), size_ * 2);
    data_ = nullptr;
    size_ = 0;
  }
}

void write_token_file(const std::filesystem::path& path, std::span<const std::uint16_t> tokens) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"),
                                                       &std::fclose);
  if (!file) fail_io(path, "cannot create");
  if (std::fwrite(tokens.data(), 2, tokens.size(), file.get()) != tokens.size()) {
    fail_io(path, "cannot write");
  }
  if (std::fclose(file.release()) != 0) fail_io(path, "cannot close");
}

}  // namespace loco::data
