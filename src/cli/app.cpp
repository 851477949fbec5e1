#include "loco/cli/app.hpp"

#include "loco/cli/toml_config.hpp"
#include "loco/version.hpp"
#include "option_kind.hpp"

namespace loco::cli {

void add_common_options(CLI::App& app, CommonOptions& options) {
  app.config_formatter(std::make_shared<TomlConfig>(app));
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

CLI::Option* add_path_option(CLI::App& app, const std::string& name, std::string& path,
                             const std::string& help) {
  return app.add_option(name, path, help)->type_name(kPathTypeName);
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
