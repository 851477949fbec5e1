#pragma once
// Command-line and config-file handling shared by every loco program (CLI11).
//
// Every option is a flag and can also come from a TOML file given with --config FILE. A key
// `name` at the top of the file sets --name; a key `key` under `[section]` sets --section.key.
// Flags on the command line win over the file, and the file wins over defaults. A key that
// names no option is an error (with a suggestion), never silently ignored.
//
// Include this header only in the few files that parse options: CLI11 is slow to compile.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace loco::cli {

struct CommonOptions {
  std::string log_level = "info";
  std::string log_format = "text";
};

// Adds --config, --version, --log-level and --log-format, and installs the strict TOML reader.
void add_common_options(CLI::App& app, CommonOptions& options);

// Parses the command line. Returns the exit code when the program should stop now (after
// --help, --version or an error, already printed by CLI11), or nothing when it should run.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

}  // namespace loco::cli
