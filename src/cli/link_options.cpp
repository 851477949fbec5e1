#include "loco/cli/link_options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <functional>

#include "loco/core/error.hpp"
#include "loco/link/units.hpp"

namespace loco::cli {

using link::kMaxFaultTime;
using link::kMaxLatency;
using link::kMinStreamWindow;
using link::LinkSettings;
using link::parse_bandwidth;
using link::parse_byte_count;
using link::parse_duration;
namespace {

using Check = std::function<void(const std::string& text, const std::string& option)>;

// A CLI11 validator that runs the strict parser and turns its Error into CLI11's message.
CLI::Validator strict(Check check, const std::string& option, const std::string& kind) {
  return CLI::Validator(
      [check = std::move(check), option](std::string& text) -> std::string {
        try {
          check(text, option);
        } catch (const Error& e) {
          // CLI11 already prefixes the option's name: drop the parser's own "<option> = ".
          const std::string message = e.what();
          const std::string prefix = "config error: " + option + " = ";
          return message.starts_with(prefix) ? message.substr(prefix.size()) : message;
        }
        return "";
      },
      kind);
}

void check_bandwidth(const std::string& text, const std::string& option) {
  parse_bandwidth(text, option);
}
void check_latency(const std::string& text, const std::string& option) {
  parse_duration(text, option, kMaxLatency);
}
void check_fault_time(const std::string& text, const std::string& option) {
  parse_duration(text, option, kMaxFaultTime);
}
void check_byte_count(const std::string& text, const std::string& option) {
  parse_byte_count(text, option);
}

// A byte count of at least kMinStreamWindow.
std::uint64_t parse_stream_window(const std::string& text, const std::string& option) {
  const std::uint64_t bytes = parse_byte_count(text, option);
  if (bytes < kMinStreamWindow) {
    throw Error(ErrorCategory::config,
                fmt::format("{} = \"{}\": {} bytes is below the minimum of {} bytes (64KiB, one "
                            "paced piece); write at least \"64KiB\", e.g. \"256KiB\" or \"4MiB\"",
                            option, text, bytes, kMinStreamWindow));
  }
  return bytes;
}
void check_stream_window(const std::string& text, const std::string& option) {
  parse_stream_window(text, option);
}

}  // namespace

void add_link_options(CLI::App& app, LinkOptions& options) {
  const auto add = [&app](const std::string& name, std::string& value, Check check,
                          const std::string& kind, const std::string& help) {
    app.add_option(name, value, help)
        ->check(strict(std::move(check), name, kind))
        ->capture_default_str();
  };
  add("--link.upload", options.upload, check_bandwidth, "BANDWIDTH",
      "Emulated upload bandwidth, e.g. 100Mbit, 1.5Gbit, 12.5MB/s, or unlimited");
  add("--link.download", options.download, check_bandwidth, "BANDWIDTH",
      "Emulated download bandwidth (paces reads), e.g. 200Mbit, or unlimited");
  add("--link.latency", options.latency, check_latency, "DURATION",
      "One-way latency added to everything sent, e.g. 40ms (at most 10s)");
  add("--link.jitter", options.jitter, check_latency, "DURATION",
      "Each chunk's delay varies uniformly by up to this much around the latency, e.g. 5ms");
  add("--link.stream-window", options.stream_window, check_stream_window, "BYTES",
      "Each connection has at most this many bytes unacknowledged (a TCP window), e.g. 256KiB; "
      "at least 64KiB");
  add("--link.drop-after-bytes", options.drop_after_bytes, check_byte_count, "BYTES",
      "Fault: close each connection when it would send more than this, e.g. 64MiB");
  add("--link.drop-at", options.drop_at, check_fault_time, "DURATION",
      "Fault: close every connection this long after start, e.g. 30s");
  add("--link.stall-at", options.stall_at, check_fault_time, "DURATION",
      "Fault: from this long after start on, send and read nothing, e.g. 30s");
}

LinkSettings to_link_settings(const LinkOptions& options) {
  LinkSettings settings;
  settings.upload = parse_bandwidth(options.upload, "--link.upload");
  settings.download = parse_bandwidth(options.download, "--link.download");
  settings.latency = parse_duration(options.latency, "--link.latency", kMaxLatency);
  settings.jitter = parse_duration(options.jitter, "--link.jitter", kMaxLatency);
  if (!options.stream_window.empty()) {
    settings.stream_window = parse_stream_window(options.stream_window, "--link.stream-window");
  }
  if (!options.drop_after_bytes.empty()) {
    settings.faults.drop_after_bytes =
        parse_byte_count(options.drop_after_bytes, "--link.drop-after-bytes");
  }
  if (!options.drop_at.empty()) {
    settings.faults.drop_at = parse_duration(options.drop_at, "--link.drop-at", kMaxFaultTime);
  }
  if (!options.stall_at.empty()) {
    settings.faults.stall_at = parse_duration(options.stall_at, "--link.stall-at", kMaxFaultTime);
  }
  validate(settings);
  return settings;
}

}  // namespace loco::cli
