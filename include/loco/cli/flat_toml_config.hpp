#pragma once
// CLI11 config reader that maps TOML sections onto flat option names ([link] upload = ... sets
// --link.upload) and rejects keys that name no option, suggesting the closest option name.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace loco::cli {

class FlatTomlConfig final : public CLI::ConfigTOML {
 public:
  explicit FlatTomlConfig(const CLI::App& app) : app_(app) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override;

 private:
  const CLI::App& app_;
};

// The option name closest to `name` by edit distance, or "" when nothing is close.
std::string closest_option(const CLI::App& app, const std::string& name);

}  // namespace loco::cli
