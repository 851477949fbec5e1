#include "loco/net/stream_hello.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/core/utf8.hpp"

namespace loco::net {
namespace {

constexpr std::uint8_t kVersion = 1;

std::string shape_problem(std::uint32_t streams, std::uint32_t unit_bytes) {
  if (streams < 1 || streams > kMaxStreams)
    return fmt::format("{} streams, outside 1..{}", streams, kMaxStreams);
  if (!std::has_single_bit(unit_bytes) || unit_bytes < kMinStripeUnitBytes ||
      unit_bytes > kMaxStripeUnitBytes)
    return fmt::format("a stripe unit of {} bytes, not a power of two in {}..{}", unit_bytes,
                       kMinStripeUnitBytes, kMaxStripeUnitBytes);
  return {};
}

}  // namespace

std::array<std::byte, kStreamHelloBytes> encode_stream_hello(const StreamHello& hello) {
  std::array<std::byte, kStreamHelloBytes> bytes{};
  bytes[0] = std::byte{kVersion};
  bytes[1] = static_cast<std::byte>(hello.index);
  bytes[2] = static_cast<std::byte>(hello.count);
  store_le(bytes.data() + 4, hello.unit_bytes);
  std::copy(hello.bundle_id.begin(), hello.bundle_id.end(), bytes.begin() + 8);
  return bytes;
}

StreamHello decode_stream_hello(std::span<const std::byte> bytes, const std::string& peer_name) {
  const auto fail = [&](const std::string& what) {
    return Error(ErrorCategory::protocol,
                 fmt::format("{} sent a stream hello with {}", peer_name, what));
  };
  if (bytes.size() != kStreamHelloBytes)
    throw fail(fmt::format("{} bytes instead of {}", bytes.size(), kStreamHelloBytes));
  if (bytes[0] != std::byte{kVersion})
    throw fail(
        fmt::format("version {} (this build speaks {})", std::to_integer<int>(bytes[0]), kVersion));
  if (bytes[3] != std::byte{0}) throw fail("a non-zero reserved byte");
  StreamHello hello;
  hello.index = std::to_integer<std::uint32_t>(bytes[1]);
  hello.count = std::to_integer<std::uint32_t>(bytes[2]);
  hello.unit_bytes = load_le<std::uint32_t>(bytes.data() + 4);
  std::copy_n(bytes.begin() + 8, hello.bundle_id.size(), hello.bundle_id.begin());
  if (const std::string problem = shape_problem(hello.count, hello.unit_bytes); !problem.empty())
    throw fail(problem);
  if (hello.index >= hello.count)
    throw fail(fmt::format("stream index {} of {} streams", hello.index, hello.count));
  return hello;
}

std::vector<std::byte> encode_stream_refusal(std::string_view reason) {
  reason = reason.substr(0, std::min(reason.size(), kMaxStreamRefusalBytes - 1));
  std::vector<std::byte> bytes{std::byte{kVersion}};
  for (const char c : reason) bytes.push_back(static_cast<std::byte>(c));
  return bytes;
}

std::string decode_stream_refusal(std::span<const std::byte> bytes, const std::string& peer_name) {
  if (bytes.empty() || bytes.size() > kMaxStreamRefusalBytes || bytes[0] != std::byte{kVersion})
    throw Error(ErrorCategory::protocol,
                fmt::format("{} refused the stream with a malformed record ({} bytes)", peer_name,
                            bytes.size()));
  std::string reason(reinterpret_cast<const char*>(bytes.data()) + 1, bytes.size() - 1);
  for (char& c : reason)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';  // no terminal escapes
  return replace_invalid_utf8(reason);
}

void validate_bundle_shape(std::uint32_t streams, std::uint32_t unit_bytes) {
  if (const std::string problem = shape_problem(streams, unit_bytes); !problem.empty())
    throw Error(ErrorCategory::invalid_argument, "a stream bundle cannot have " + problem);
}

}  // namespace loco::net
