#include "loco/core/log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>

#include "loco/core/error.hpp"
#include "loco/core/utf8.hpp"

namespace loco {
namespace {

// The message of a log line, made printable (core/utf8.hpp): whatever text from outside it quotes,
// it stays one line that reads as written (no newline, terminal escape, right-to-left override or
// line separator). %& in a pattern: as it is; %* escaped for a JSON string as well.
template <bool Json>
class MessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string shown = printable(std::string_view(msg.payload.data(), msg.payload.size()));
    if constexpr (Json) shown = json_escape(shown);
    dest.append(shown.data(), shown.data() + shown.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<MessageFlag>();
  }
};

spdlog::level::level_enum parse_level(std::string_view level) {
  static constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 6> kLevels{{
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},
      {"off", spdlog::level::off},
  }};
  for (const auto& [name, value] : kLevels) {
    if (name == level) return value;
  }
  throw Error(ErrorCategory::config, "unknown log level '" + std::string(level) +
                                         "'; use one of trace, debug, info, warn, error, off");
}

}  // namespace

void init_logging(std::string_view level, std::string_view format) {
  const auto parsed_level = parse_level(level);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (format == "text") {
    formatter->add_flag<MessageFlag<false>>('&').set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %&");
  } else if (format == "json") {
    formatter->add_flag<MessageFlag<true>>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":"%*"})");
  } else {
    throw Error(ErrorCategory::config,
                "unknown log format '" + std::string(format) + "'; use text or json");
  }
  auto logger = std::make_shared<spdlog::logger>(
      "loco", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_formatter(std::move(formatter));
  logger->set_level(parsed_level);
  spdlog::set_default_logger(std::move(logger));
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace loco
