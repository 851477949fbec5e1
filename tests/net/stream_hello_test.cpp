// The stream hello: round trip, and every malformed field refused with a message that says why.

#include "loco/net/stream_hello.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::net {
namespace {

StreamHello sample() {
  StreamHello hello{.index = 2, .count = 3, .unit_bytes = 1 << 18, .bundle_id = {}};
  for (std::size_t i = 0; i < hello.bundle_id.size(); ++i)
    hello.bundle_id[i] = static_cast<std::byte>(i * 11 + 1);
  return hello;
}

std::string error_of(std::span<const std::byte> bytes) {
  try {
    decode_stream_hello(bytes, "peer x");
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::protocol);
    return e.what();
  }
  return "no error";
}

TEST(StreamHello, RoundTrips) {
  const auto bytes = encode_stream_hello(sample());
  EXPECT_EQ(decode_stream_hello(bytes, "peer x"), sample());
}

TEST(StreamHello, RefusesEachMalformedField) {
  const auto good = encode_stream_hello(sample());
  auto with = [&](std::size_t at, std::uint8_t value) {
    auto bytes = good;
    bytes[at] = std::byte{value};
    return error_of(bytes);
  };
  EXPECT_NE(error_of(std::span(good).first(23)).find("23 bytes"), std::string::npos);
  EXPECT_NE(with(0, 2).find("version 2"), std::string::npos);
  EXPECT_NE(with(1, 3).find("index 3 of 3"), std::string::npos);
  EXPECT_NE(with(2, 0).find("0 streams"), std::string::npos);
  EXPECT_NE(with(2, 17).find("17 streams"), std::string::npos);
  EXPECT_NE(with(3, 1).find("reserved"), std::string::npos);
  EXPECT_NE(with(5, 0x05).find("not a power of two"), std::string::npos);  // 0x050000 bytes
  EXPECT_NE(with(6, 0x00).find("not a power of two"), std::string::npos);  // 0 bytes
  auto too_big = good;                                                     // 32 MiB
  too_big[6] = std::byte{0};
  too_big[7] = std::byte{2};
  EXPECT_NE(error_of(too_big).find("33554432"), std::string::npos);
  EXPECT_NE(error_of(good).find("no error"), std::string::npos);
}

TEST(StreamHello, ShapeValidation) {
  EXPECT_NO_THROW(validate_bundle_shape(1, 4096));
  EXPECT_NO_THROW(validate_bundle_shape(16, 16 << 20));
  EXPECT_THROW(validate_bundle_shape(0, 4096), Error);
  EXPECT_THROW(validate_bundle_shape(17, 4096), Error);
  EXPECT_THROW(validate_bundle_shape(2, 2048), Error);
  EXPECT_THROW(validate_bundle_shape(2, 5000), Error);
}

TEST(StreamRefusal, RoundTripsAndRefusesMalformedRecords) {
  EXPECT_EQ(decode_stream_refusal(encode_stream_refusal("full: 4096 streams admitted"), "p"),
            "full: 4096 streams admitted");
  // Control characters are not printed as they came.
  EXPECT_EQ(decode_stream_refusal(encode_stream_refusal("a\x1b[2Jb"), "p"), "a?[2Jb");
  EXPECT_EQ(encode_stream_refusal(std::string(1000, 'x')).size(), kMaxStreamRefusalBytes);
  EXPECT_THROW(decode_stream_refusal({}, "p"), Error);
  std::vector<std::byte> long_record(kMaxStreamRefusalBytes + 1, std::byte{'x'});
  long_record[0] = std::byte{1};
  EXPECT_THROW(decode_stream_refusal(long_record, "p"), Error);
  EXPECT_THROW(decode_stream_refusal(std::vector<std::byte>{std::byte{2}, std::byte{'x'}}, "p"),
               Error);
}

}  // namespace
}  // namespace loco::net
