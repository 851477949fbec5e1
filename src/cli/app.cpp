#include "loco/cli/app.hpp"

#include <algorithm>
#include <sstream>

#include "loco/cli/flat_toml_config.hpp"
#include "loco/version.hpp"

namespace loco::cli {

void add_common_options(CLI::App& app, CommonOptions& options) {
  app.config_formatter(std::make_shared<FlatTomlConfig>(app));
  app.set_config("--config", "",
                 "Read options from this TOML file (flags given on the command line win)");
  app.set_version_flag("--version", std::string(app.get_name()) + " " + kVersion);
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--log-format", options.log_format,
                 "text (for people) or json (one object per line)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

}  // namespace loco::cli
