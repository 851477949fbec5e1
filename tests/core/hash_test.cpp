#include "loco/core/hash.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace loco {
namespace {

std::span<const std::byte> bytes_of(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST(Blake2b, MatchesKnownVector) {
  // BLAKE2b-256 of the empty input and of "abc" (RFC 7693 parameters, 32-byte output).
  EXPECT_EQ(to_hex(blake2b(bytes_of(""))),
            "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
  EXPECT_EQ(to_hex(blake2b(bytes_of("abc"))),
            "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
}

TEST(Blake2b, IncrementalEqualsOneShot) {
  const std::string_view text = "the quick brown fox jumps over the lazy dog";
  Blake2b h;
  h.update(bytes_of(text.substr(0, 10))).update(bytes_of(text.substr(10)));
  EXPECT_EQ(h.finish(), blake2b(bytes_of(text)));
}

TEST(Blake2b, HashesFloatsAsLittleEndianBytes) {
  const float values[] = {1.0f};  // 0x3f800000
  const unsigned char raw[] = {0x00, 0x00, 0x80, 0x3f};
  EXPECT_EQ(blake2b(std::span<const float>(values)), blake2b(std::as_bytes(std::span(raw))));
}

TEST(Blake2b, U64IsLittleEndian) {
  const unsigned char raw[] = {0x01, 0x02, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Blake2b().update_u64(0x0201).finish(), blake2b(std::as_bytes(std::span(raw))));
}

TEST(Hex, FormatsEveryByte) {
  const std::uint8_t bytes[] = {0x00, 0x0f, 0xa0, 0xff};
  EXPECT_EQ(to_hex(std::span<const std::uint8_t>(bytes)), "000fa0ff");
}

}  // namespace
}  // namespace loco
