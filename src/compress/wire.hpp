#pragma once
// Little-endian message building and checked reading, shared by the codecs (internal header).
// Every read checks the remaining length first and throws Error(format) naming the codec.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"

namespace loco::compress::wire {

static_assert(std::endian::native == std::endian::little, "loco's wire formats assume LE hosts");

inline constexpr std::uint8_t kMagic0 = 'l';
inline constexpr std::uint8_t kMagic1 = 'c';
inline constexpr std::uint8_t kVersion = 1;

[[noreturn]] inline void malformed(const char* codec, const std::string& what) {
  throw Error(ErrorCategory::format, std::string(codec) + " message is malformed: " + what +
                                         " (the sender uses another codec spec or build, or the "
                                         "message was corrupted)");
}

// a * b + c, or a format error when it overflows (sizes derived from untrusted counts).
inline std::size_t checked_size(const char* codec, std::size_t a, std::size_t b,
                                std::size_t c = 0) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  if (b != 0 && a > (kMax - c) / b) malformed(codec, "declared sizes overflow");
  return a * b + c;
}

class Writer {
 public:
  explicit Writer(std::size_t reserve) { bytes_.reserve(reserve); }

  void header(CodecId id, std::size_t count) {
    u8(kMagic0);
    u8(kMagic1);
    u8(static_cast<std::uint8_t>(id));
    u8(kVersion);
    u64(count);
  }
  void u8(std::uint8_t v) { raw(&v, 1); }
  void u16(std::uint16_t v) { raw(&v, 2); }
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void f32(float v) { raw(&v, 4); }
  void raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  // Grows the message by `size` bytes and returns where they start (for kernels to fill).
  std::byte* extend(std::size_t size) {
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size);
    return bytes_.data() + at;
  }
  std::vector<std::byte> finish() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const char* codec) : bytes_(bytes), codec_(codec) {}

  // Checks magic, codec id, version, and that the count equals what the receiver expects.
  void header(CodecId id, std::size_t expected_count) {
    if (u8() != kMagic0 || u8() != kMagic1) malformed(codec_, "bad magic bytes");
    const std::uint8_t got_id = u8();
    if (got_id != static_cast<std::uint8_t>(id)) {
      malformed(codec_, "codec id " + std::to_string(got_id) + ", expected " +
                            std::to_string(static_cast<int>(id)));
    }
    const std::uint8_t version = u8();
    if (version != kVersion) {
      malformed(codec_, "format version " + std::to_string(version) + ", this build reads " +
                            std::to_string(kVersion));
    }
    const std::uint64_t count = u64();
    if (count != expected_count) {
      malformed(codec_, "declares " + std::to_string(count) + " values, the receiver expects " +
                            std::to_string(expected_count));
    }
  }
  std::uint8_t u8() { return read<std::uint8_t>(); }
  std::uint16_t u16() { return read<std::uint16_t>(); }
  std::uint32_t u32() { return read<std::uint32_t>(); }
  std::uint64_t u64() { return read<std::uint64_t>(); }
  float f32() { return read<float>(); }
  // The next `size` bytes, after checking they are there.
  const std::byte* take(std::size_t size) {
    need(size);
    const std::byte* p = bytes_.data() + at_;
    at_ += size;
    return p;
  }
  std::span<const std::byte> rest() {
    auto out = bytes_.subspan(at_);
    at_ = bytes_.size();
    return out;
  }
  std::size_t remaining() const { return bytes_.size() - at_; }
  // The payload must be exactly `size` more bytes: no truncation and no trailing garbage.
  void expect_remaining(std::size_t size) const {
    if (remaining() != size) {
      malformed(codec_, "payload is " + std::to_string(remaining()) +
                            " bytes, the header implies " + std::to_string(size));
    }
  }
  [[noreturn]] void fail(const std::string& what) const { malformed(codec_, what); }

 private:
  void need(std::size_t size) const {
    if (remaining() < size) {
      malformed(codec_, "truncated: " + std::to_string(remaining()) + " bytes left, " +
                            std::to_string(size) + " needed");
    }
  }
  template <typename T>
  T read() {
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }

  std::span<const std::byte> bytes_;
  const char* codec_;
  std::size_t at_ = 0;
};

}  // namespace loco::compress::wire
