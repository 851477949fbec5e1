#include "loco/link/units.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cmath>
#include <span>

#include "loco/core/error.hpp"

namespace loco::link {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // base units (bit/s, ns, bytes) per one of this unit
};

constexpr std::array<Unit, 6> kBandwidthUnits{
    {{"kbit", 1e3}, {"Mbit", 1e6}, {"Gbit", 1e9}, {"kB/s", 8e3}, {"MB/s", 8e6}, {"GB/s", 8e9}}};
// Minutes are "min", not "m": "10m" would be ten minutes one typo away from "10ms".
constexpr std::array<Unit, 5> kDurationUnits{
    {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"min", 60e9}, {"h", 3600e9}}};
constexpr std::array<Unit, 8> kByteUnits{{{"", 1.0},  // a bare integer counts bytes
                                          {"B", 1.0},
                                          {"kB", 1e3},
                                          {"MB", 1e6},
                                          {"GB", 1e9},
                                          {"KiB", 1024.0},
                                          {"MiB", 1024.0 * 1024},
                                          {"GiB", 1024.0 * 1024 * 1024}}};

constexpr std::string_view kBandwidthExamples =
    "write a number and a unit: kbit, Mbit, Gbit (bits per second) or kB/s, MB/s, GB/s (bytes "
    "per second), e.g. \"100Mbit\", \"1.5Gbit\", \"800kbit\", \"12.5MB/s\", or \"unlimited\"";
constexpr std::string_view kDurationExamples =
    "write a number and a unit: us, ms, s, min or h, e.g. \"40ms\", \"250us\", \"1.5s\", "
    "\"10min\", or \"0\"";
constexpr std::string_view kByteExamples =
    "write a whole number of bytes, optionally with a unit: B, kB, MB, GB (powers of 1000) or "
    "KiB, MiB, GiB (powers of 1024), e.g. \"1048576\", \"64KiB\", \"1.5MB\"";

[[noreturn]] void reject(std::string_view option, std::string_view text, std::string_view reason,
                         std::string_view examples) {
  throw Error(ErrorCategory::config,
              fmt::format("{} = \"{}\": {}; {}", option, text, reason, examples));
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Parses "<digits>[.<digits>]<unit>" into base units; rejects with a reason that says what is
// wrong (sign, missing unit, unknown unit, a unit in the wrong case, too many digits).
double parse_quantity(std::string_view text, std::string_view option, std::span<const Unit> units,
                      std::string_view examples) {
  if (text.empty()) reject(option, text, "the value is empty", examples);
  if (text.front() == '-') reject(option, text, "negative values are not allowed", examples);
  std::size_t pos = 0;
  std::uint64_t mantissa = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool seen_point = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '.' && !seen_point && digits > 0) {
      seen_point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 15) reject(option, text, "too many digits", examples);
    mantissa = mantissa * 10 + static_cast<std::uint64_t>(c - '0');
    if (seen_point) ++fraction_digits;
  }
  if (digits == 0) reject(option, text, "it does not start with a number", examples);
  if (seen_point && fraction_digits == 0) {
    reject(option, text, "a decimal point needs digits after it", examples);
  }
  const std::string_view unit = text.substr(pos);
  const double value = static_cast<double>(mantissa) / std::pow(10.0, fraction_digits);
  for (const Unit& u : units) {
    if (unit == u.name) return value * u.factor;
  }
  if (unit.empty()) {
    if (mantissa == 0) return 0.0;  // a bare zero needs no unit
    reject(option, text, "the unit is missing", examples);
  }
  for (const Unit& u : units) {
    if (equal_ignoring_case(unit, u.name)) {
      reject(option, text, fmt::format("units are case-sensitive: did you mean \"{}\"?", u.name),
             examples);
    }
  }
  reject(option, text, fmt::format("unknown unit \"{}\"", unit), examples);
}

// Prints `value` with at most three decimals and no trailing zeros.
std::string trim_decimal(double value) {
  std::string s = fmt::format("{:.3f}", value);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

BitRate parse_bandwidth(std::string_view text, std::string_view option) {
  if (text == "unlimited" || text == "0") return kUnlimited;
  const double bits = parse_quantity(text, option, kBandwidthUnits, kBandwidthExamples);
  if (bits == 0.0) {
    reject(option, text,
           "a zero rate would stop all traffic (write \"unlimited\" or 0 for no limit, or use "
           "--link.stall-at to stop traffic)",
           kBandwidthExamples);
  }
  if (bits < static_cast<double>(kMinBitRate) || bits > static_cast<double>(kMaxBitRate)) {
    reject(option, text, "outside the supported range 1kbit to 1000Gbit", kBandwidthExamples);
  }
  return static_cast<BitRate>(std::llround(bits));
}

Duration parse_duration(std::string_view text, std::string_view option, Duration max) {
  const double ns = parse_quantity(text, option, kDurationUnits, kDurationExamples);
  if (ns > static_cast<double>(max.count())) {
    reject(option, text, fmt::format("more than the maximum of {}", format_duration(max)),
           kDurationExamples);
  }
  return Duration(std::llround(ns));
}

std::uint64_t parse_byte_count(std::string_view text, std::string_view option) {
  const double bytes = parse_quantity(text, option, kByteUnits, kByteExamples);
  if (bytes > 1e15) reject(option, text, "more than the maximum of 1000TB", kByteExamples);
  const double whole = std::round(bytes);
  if (std::abs(bytes - whole) > 1e-6) {
    reject(option, text, "not a whole number of bytes", kByteExamples);
  }
  return static_cast<std::uint64_t>(whole);
}

std::string format_bandwidth(BitRate rate) {
  if (rate == kUnlimited) return "unlimited";
  const double bits = static_cast<double>(rate);
  if (rate >= 1'000'000'000) return trim_decimal(bits / 1e9) + "Gbit";
  if (rate >= 1'000'000) return trim_decimal(bits / 1e6) + "Mbit";
  return trim_decimal(bits / 1e3) + "kbit";
}

std::string format_duration(Duration d) {
  if (d == Duration{0}) return "0";
  const double ns = static_cast<double>(d.count());
  if (d >= std::chrono::seconds(1)) return trim_decimal(ns / 1e9) + "s";
  if (d >= std::chrono::milliseconds(1)) return trim_decimal(ns / 1e6) + "ms";
  return trim_decimal(ns / 1e3) + "us";
}

}  // namespace loco::link
