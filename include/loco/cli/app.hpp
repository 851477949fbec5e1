#pragma once
// Command-line and config-file handling shared by every loco program (CLI11).
//
// Every option is a flag and can also come from a TOML file given with --config FILE. A key
// `name` at the top of the file sets --name; a key `key` under `[section]` sets --section.key.
// Flags on the command line win over the file, and the file wins over defaults. A key that
// names no option, or whose value's type does not fit the option, is an error, never silently
// ignored (loco/cli/toml_config.hpp).
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

// Adds an option whose value is a file or folder (shown as PATH in --help). A relative path in a
// config file is resolved from the file's folder; on the command line it stays relative to the
// working directory.
CLI::Option* add_path_option(CLI::App& app, const std::string& name, std::string& path,
                             const std::string& help);

// Parses the command line. Returns the exit code when the program should stop now (after
// --help, --version or an error, already printed by CLI11), or nothing when it should run.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

}  // namespace loco::cli
