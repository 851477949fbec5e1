#include "loco/core/byte_io.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco {

void ByteWriter::raw(const void* data, std::size_t size) {
  if (size > 0) std::memcpy(extend(size), data, size);
}

std::byte* ByteWriter::extend(std::size_t size) {
  const std::size_t at = bytes_.size();
  bytes_.resize(at + size);
  return bytes_.data() + at;
}

bool ByteReader::boolean() {
  const std::uint8_t v = u8();
  if (v > 1) fail(fmt::format("a flag holds {}, not 0 or 1", v));
  return v == 1;
}

std::string ByteReader::string(std::size_t max_bytes) {
  const std::uint32_t size = u32();
  if (size > max_bytes) fail(fmt::format("a {}-byte string where at most {} fit", size, max_bytes));
  const std::byte* p = take(size);
  return std::string(reinterpret_cast<const char*>(p), size);
}

std::size_t ByteReader::count(std::size_t max, std::size_t min_element_bytes) {
  const std::uint32_t n = u32();
  if (n > max) fail(fmt::format("a count of {} where at most {} are allowed", n, max));
  if (min_element_bytes > 0 && n > remaining() / min_element_bytes)
    fail(fmt::format("a count of {} that cannot fit in the {} bytes left", n, remaining()));
  return n;
}

void ByteReader::expect_end() const {
  if (remaining() != 0) fail(fmt::format("{} bytes after its end", remaining()));
}

void ByteReader::fail(const std::string& detail) const {
  throw Error(ErrorCategory::format, fmt::format("{} is malformed: {}{}", what_, detail, hint_));
}

void ByteReader::truncated(std::size_t size) const {
  fail(fmt::format("truncated: {} bytes left, {} needed", remaining(), size));
}

}  // namespace loco
