#pragma once
// Strict parsing of the quantities people write in link settings: bandwidths, durations and
// byte counts. Each value is a plain decimal number (digits, optionally a '.' and more digits;
// no sign, no exponent, no spaces) followed directly by one unit from a small, case-sensitive
// set. Anything else is an Error(config) that quotes the value, names the option and shows
// valid examples, so "100mbit" or "40 ms" or "-5ms" never becomes a silent default.
//
//   bandwidth  kbit Mbit Gbit (bits per second, decimal: 1 Mbit = 10^6 bit/s)
//              kB/s MB/s GB/s (bytes per second, decimal: 1 MB/s = 8 Mbit)
//              "unlimited" or "0" (no limit); range 1kbit .. 1000Gbit
//   duration   us ms s; a bare "0" is zero; range 0 .. the caller's maximum
//   byte count a bare integer (bytes) or B kB MB GB (decimal) or KiB MiB GiB (binary)

#include <cstdint>
#include <string>
#include <string_view>

#include "loco/core/time.hpp"

namespace loco::link {

// Bits per second; 0 means unlimited.
using BitRate = std::uint64_t;
inline constexpr BitRate kUnlimited = 0;
inline constexpr BitRate kMinBitRate = 1'000;              // 1kbit: slower is a stall, use one
inline constexpr BitRate kMaxBitRate = 1'000'000'000'000;  // 1000Gbit

// `option` names the setting in error messages (e.g. "--link.upload").
BitRate parse_bandwidth(std::string_view text, std::string_view option);

// Throws when the value exceeds `max` (an absurd latency is more likely a typo than a wish).
Duration parse_duration(std::string_view text, std::string_view option, Duration max);

std::uint64_t parse_byte_count(std::string_view text, std::string_view option);

// Human-readable forms for logs ("100Mbit", "unlimited", "40ms", "1.5s").
std::string format_bandwidth(BitRate rate);
std::string format_duration(Duration d);

}  // namespace loco::link
