// The bounds-checked reader and the writer every wire format is built with.

#include "loco/core/byte_io.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(ByteIo, RoundTripsEveryFieldLittleEndian) {
  ByteWriter w;
  w.u8(0xab);
  w.u16(0x1234);
  w.u32(0xdeadbeef);
  w.u64(0x0102030405060708);
  w.f32(-1.5f);
  w.f64(3.25);
  w.boolean(true);
  w.string("peer");
  const auto bytes = w.finish();
  EXPECT_EQ(std::to_integer<int>(bytes[1]), 0x34) << "little-endian";
  ByteReader r(bytes, "test message");
  EXPECT_EQ(r.u8(), 0xab);
  EXPECT_EQ(r.u16(), 0x1234);
  EXPECT_EQ(r.u32(), 0xdeadbeefu);
  EXPECT_EQ(r.u64(), 0x0102030405060708u);
  EXPECT_EQ(r.f32(), -1.5f);
  EXPECT_EQ(r.f64(), 3.25);
  EXPECT_TRUE(r.boolean());
  EXPECT_EQ(r.string(10), "peer");
  r.expect_end();
}

TEST(ByteIo, RefusesWhatDoesNotFitBeforeAllocating) {
  ByteWriter w;
  w.u32(1'000'000);  // a string length far beyond the buffer
  const auto huge = w.finish();
  EXPECT_NE(error_of([&] {
              ByteReader(huge, "join request").string(1 << 30);
            }).find("join request is malformed: truncated"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ByteReader(huge, "join request").string(64); }).find("at most 64"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ByteReader(huge, "view").count(1 << 30, 8); }).find("cannot fit"),
            std::string::npos);
  EXPECT_NE(error_of([&] { ByteReader(huge, "view").count(100, 0); }).find("at most 100"),
            std::string::npos);
  const std::byte two[] = {std::byte{2}};
  EXPECT_NE(error_of([&] { ByteReader(two, "flag").boolean(); }).find("not 0 or 1"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              ByteReader r(huge, "heartbeat", " (hint)");
              r.u8();
              r.expect_end();
            }).find("3 bytes after its end (hint)"),
            std::string::npos);
}

}  // namespace
}  // namespace loco
