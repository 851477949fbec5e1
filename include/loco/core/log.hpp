#pragma once
// Logging setup. Library code logs through spdlog's default logger (spdlog::info(...)); the
// programs call init_logging() once from their command-line options.

#include <string>
#include <string_view>

namespace loco {

enum class LogFormat {
  text,  // "2026-11-22 10:00:00.123 info  message"
  json,  // one JSON object per line: {"time":..., "level":..., "msg":...}
};

// Parses "trace|debug|info|warn|error|off" and "text|json"; throws Error(config) otherwise.
// Logs go to stderr, so stdout stays free for a program's results.
void init_logging(std::string_view level, std::string_view format);

// Escapes a string for inclusion inside a JSON string literal.
std::string json_escape(std::string_view text);

}  // namespace loco
