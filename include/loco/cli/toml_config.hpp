#pragma once
// The config-file reader every loco program installs (add_common_options). toml++ parses the
// file (TOML 1.0); each key becomes the CLI11 item of the flag it names: `key` at the top sets
// --key, `key` under [section] (or [section.sub]) sets --section.key (--section.sub.key). Refused
// with the file and line, as CLI::ConfigError: a TOML syntax error, a key that names no option
// (with the closest option name), and a value whose type does not fit the option (see
// src/cli/option_kind.hpp). A relative path given to a path option (add_path_option) is resolved
// from the file's folder.

#include <CLI/CLI.hpp>
#include <istream>
#include <string>
#include <vector>

namespace loco::cli {

// Reads `input`, the text of config file `file`, into items for `app`.
std::vector<CLI::ConfigItem> read_config(const CLI::App& app, std::istream& input,
                                         const std::string& file);

// CLI11's config formatter for read_config (CLI11's own TOML writer stays for config_to_str).
class TomlConfig final : public CLI::ConfigTOML {
 public:
  explicit TomlConfig(const CLI::App& app) : app_(app) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App& app_;
};

}  // namespace loco::cli
