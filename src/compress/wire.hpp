#pragma once
// The codecs' message header on top of core's ByteWriter / ByteReader (internal header). Every
// read checks the remaining length first and throws Error(format) naming the codec.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"

namespace loco::compress::wire {

inline constexpr std::uint8_t kMagic0 = 'l';
inline constexpr std::uint8_t kMagic1 = 'c';
inline constexpr std::uint8_t kVersion = 1;

inline constexpr const char* kHint =
    " (the sender uses another codec spec or build, or the message was corrupted)";

[[noreturn]] inline void malformed(const char* codec, const std::string& what) {
  throw Error(ErrorCategory::format, std::string(codec) + " message is malformed: " + what + kHint);
}

// a * b + c, or a format error when it overflows (sizes derived from untrusted counts).
inline std::size_t checked_size(const char* codec, std::size_t a, std::size_t b,
                                std::size_t c = 0) {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  if (b != 0 && a > (kMax - c) / b) malformed(codec, "declared sizes overflow");
  return a * b + c;
}

class Writer : public ByteWriter {
 public:
  explicit Writer(std::size_t reserve) : ByteWriter(reserve) {}

  void header(CodecId id, std::size_t count) {
    u8(kMagic0);
    u8(kMagic1);
    u8(static_cast<std::uint8_t>(id));
    u8(kVersion);
    u64(count);
  }
};

// Holds "<codec> message", the name a Reader's errors use; a base so it exists before ByteReader.
struct MessageName {
  std::string text;
};

class Reader : private MessageName, public ByteReader {
 public:
  Reader(std::span<const std::byte> bytes, const char* codec)
      : MessageName{std::string(codec) + " message"}, ByteReader(bytes, text, kHint) {}
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Checks magic, codec id, version, and that the count equals what the receiver expects.
  void header(CodecId id, std::size_t expected_count) {
    if (u8() != kMagic0 || u8() != kMagic1) fail("bad magic bytes");
    const std::uint8_t got_id = u8();
    if (got_id != static_cast<std::uint8_t>(id)) {
      fail("codec id " + std::to_string(got_id) + ", expected " +
           std::to_string(static_cast<int>(id)));
    }
    const std::uint8_t version = u8();
    if (version != kVersion) {
      fail("format version " + std::to_string(version) + ", this build reads " +
           std::to_string(kVersion));
    }
    const std::uint64_t count = u64();
    if (count != expected_count) {
      fail("declares " + std::to_string(count) + " values, the receiver expects " +
           std::to_string(expected_count));
    }
  }
  // The payload must be exactly `size` more bytes: no truncation and no trailing garbage.
  void expect_remaining(std::size_t size) const {
    if (remaining() != size) {
      fail("payload is " + std::to_string(remaining()) + " bytes, the header implies " +
           std::to_string(size));
    }
  }
};

}  // namespace loco::compress::wire
