#pragma once
// Little-endian integers in byte buffers, and the one bounds-checked reader and writer that every
// wire format of loco is built with (frames, stream hellos, stripes, codecs, protocol messages).
//
// ByteReader never reads past its span and never allocates a size it has not checked against the
// bytes that remain: a read that does not fit throws Error(format) "<what> is malformed: ...",
// where `what` names the message ("join request", "int8 message"). A decoder ends with
// expect_end(), so trailing bytes are refused too.

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loco {

static_assert(std::endian::native == std::endian::little, "loco's wire formats assume LE hosts");

template <std::unsigned_integral T>
void store_le(std::byte* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<std::byte>(value >> (8 * i));
}

template <std::unsigned_integral T>
T load_le(const std::byte* in) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(std::to_integer<T>(in[i]) << (8 * i));
  return value;
}

class ByteWriter {
 public:
  ByteWriter() = default;
  explicit ByteWriter(std::size_t reserve) { bytes_.reserve(reserve); }

  void u8(std::uint8_t v) { raw(&v, 1); }
  void u16(std::uint16_t v) { put(v); }
  void u32(std::uint32_t v) { put(v); }
  void u64(std::uint64_t v) { put(v); }
  void f32(float v) { put(std::bit_cast<std::uint32_t>(v)); }
  void f64(double v) { put(std::bit_cast<std::uint64_t>(v)); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void bytes(std::span<const std::byte> v) { raw(v.data(), v.size()); }
  template <std::size_t N>
  void bytes(const std::array<std::uint8_t, N>& v) {
    raw(v.data(), N);
  }
  // A u32 length, then the bytes.
  void string(std::string_view v) {
    u32(static_cast<std::uint32_t>(v.size()));
    raw(v.data(), v.size());
  }
  // Out of line: inlined into small constant-size writes, GCC 12 reports false buffer overflows.
  void raw(const void* data, std::size_t size);
  // Grows the buffer by `size` bytes and returns where they start (for kernels to fill).
  std::byte* extend(std::size_t size);
  std::size_t size() const { return bytes_.size(); }
  std::vector<std::byte> finish() { return std::move(bytes_); }

 private:
  template <std::unsigned_integral T>
  void put(T v) {
    std::byte buffer[sizeof(T)];
    store_le(buffer, v);
    raw(buffer, sizeof(T));
  }

  std::vector<std::byte> bytes_;
};

class ByteReader {
 public:
  // `what` names the message in errors; `hint`, if any, follows every error (what the user may
  // check). Both must outlive the reader.
  ByteReader(std::span<const std::byte> bytes, std::string_view what, std::string_view hint = {})
      : bytes_(bytes), what_(what), hint_(hint) {}

  std::uint8_t u8() { return std::to_integer<std::uint8_t>(*take(1)); }
  std::uint16_t u16() { return load_le<std::uint16_t>(take(2)); }
  std::uint32_t u32() { return load_le<std::uint32_t>(take(4)); }
  std::uint64_t u64() { return load_le<std::uint64_t>(take(8)); }
  float f32() { return std::bit_cast<float>(u32()); }
  double f64() { return std::bit_cast<double>(u64()); }
  bool boolean();  // 0 or 1; anything else is malformed
  template <std::size_t N>
  void bytes(std::array<std::uint8_t, N>& out) {
    std::memcpy(out.data(), take(N), N);
  }
  // A u32 length (at most `max_bytes`, and no more than what remains), then the bytes.
  std::string string(std::size_t max_bytes);
  // A u32 count of elements of at least `min_element_bytes` each; refused when above `max` or when
  // that many elements cannot fit in what remains, so the caller may reserve `count` at once.
  std::size_t count(std::size_t max, std::size_t min_element_bytes);

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
  // Every byte was read: no trailing garbage.
  void expect_end() const;

  [[noreturn]] void fail(const std::string& detail) const;

 private:
  void need(std::size_t size) const {
    if (remaining() < size) truncated(size);
  }
  [[noreturn]] void truncated(std::size_t size) const;

  std::span<const std::byte> bytes_;
  std::string_view what_;
  std::string_view hint_;
  std::size_t at_ = 0;
};

}  // namespace loco
