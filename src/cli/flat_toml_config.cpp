#include "loco/cli/flat_toml_config.hpp"

#include <algorithm>
#include <numeric>

namespace loco::cli {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string config_file_name(const CLI::App& app) {
  const CLI::Option* config = app.get_config_ptr();
  if (config == nullptr || config->empty()) return "the config file";
  return "config file '" + config->as<std::string>() + "'";
}

}  // namespace

std::string closest_option(const CLI::App& app, const std::string& name) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, name.size() / 3) + 1;
  for (const CLI::Option* option : app.get_options()) {
    const std::string candidate = option->get_single_name();
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::vector<CLI::ConfigItem> FlatTomlConfig::from_config(std::istream& input) const {
  std::vector<CLI::ConfigItem> flat;
  for (CLI::ConfigItem& item : CLI::ConfigTOML::from_config(input)) {
    // CLI11 marks section starts and ends with "++" and "--" items; flat names need neither.
    if (item.name == "++" || item.name == "--") continue;
    CLI::ConfigItem renamed;
    renamed.name = item.fullname();
    renamed.inputs = std::move(item.inputs);
    if (app_.get_option_no_throw("--" + renamed.name) == nullptr) {
      std::string message = "unknown key '" + renamed.name + "' in " + config_file_name(app_);
      if (const std::string suggestion = closest_option(app_, renamed.name); !suggestion.empty()) {
        message += "; did you mean '" + suggestion + "'?";
      }
      message += " (" + app_.get_name() + " --help lists every option)";
      throw CLI::ConfigError(message);
    }
    flat.push_back(std::move(renamed));
  }
  return flat;
}

}  // namespace loco::cli
