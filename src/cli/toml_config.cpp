#include "loco/cli/toml_config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "closest_option.hpp"
#include "option_kind.hpp"
#include "tomlplusplus.hpp"

namespace loco::cli {
namespace {

std::string describe(toml::node_type type) {
  switch (type) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

bool is_scalar(toml::node_type type) {
  return type == toml::node_type::string || type == toml::node_type::integer ||
         type == toml::node_type::floating_point || type == toml::node_type::boolean;
}

bool fits(ValueKind kind, toml::node_type type) {
  switch (kind) {
    case ValueKind::boolean: return type == toml::node_type::boolean;
    case ValueKind::integer: return type == toml::node_type::integer;
    case ValueKind::number:
      return type == toml::node_type::integer || type == toml::node_type::floating_point;
    case ValueKind::string: return type == toml::node_type::string;
    case ValueKind::any: break;
  }
  return is_scalar(type);
}

// A scalar as CLI11 reads it from a command line.
std::string as_text(const toml::node& node) {
  if (const auto text = node.value_exact<std::string>()) return *text;
  if (const auto integer = node.value_exact<std::int64_t>()) return std::to_string(*integer);
  if (const auto number = node.value_exact<double>()) return fmt::format("{}", *number);
  return node.value_exact<bool>().value_or(false) ? "true" : "false";
}

// The value as written in TOML, for messages.
std::string as_toml(const toml::node& node) {
  std::ostringstream out;
  node.visit([&out](const auto& n) { out << n; });
  return out.str();
}

// Turns the parsed document into CLI11 items, one per key, checking each against its option.
class Reader {
 public:
  Reader(const CLI::App& app, const std::string& file)
      : app_(app), file_(file), folder_(std::filesystem::path(file).parent_path()) {}

  // Adds the items of `table`, whose keys are named `prefix` + key.
  void read(const toml::table& table, const std::string& prefix) {
    for (const auto& [key, node] : table) {
      const std::string name = prefix + std::string(key.str());
      if (const toml::table* section = node.as_table()) {
        read(*section, name + ".");
      } else {
        items_.push_back(item(name, node));
      }
    }
  }

  std::vector<CLI::ConfigItem> take_items() { return std::move(items_); }

 private:
  CLI::ConfigItem item(const std::string& name, const toml::node& value) const {
    const CLI::Option* option = app_.get_option_no_throw("--" + name);
    if (option == nullptr) refuse_unknown(name, value);
    const OptionKind kind = option_kind(*option);
    CLI::ConfigItem item;
    item.name = name;
    if (const toml::array* values = value.as_array(); values != nullptr && kind.many) {
      for (std::size_t i = 0; i < values->size(); ++i) {
        const toml::node& element = *values->get(i);
        check(element, fmt::format("{}[{}]", name, i), name, kind.value, describe(kind.value));
        item.inputs.push_back(input(element, kind));
      }
    } else {
      const std::string expected = describe(kind.value) + (kind.many ? " or an array of them" : "");
      check(value, name, name, kind.value, expected);
      item.inputs.push_back(input(value, kind));
    }
    return item;
  }

  void check(const toml::node& value, const std::string& label, const std::string& name,
             ValueKind kind, const std::string& expected) const {
    if (fits(kind, value.type())) return;
    // A number or a word meant as text (a run id of 42, a byte count): say how to write it.
    const std::string hint = kind == ValueKind::string && is_scalar(value.type())
                                 ? fmt::format(" (quote it: \"{}\")", as_text(value))
                                 : "";
    throw CLI::ConfigError(fmt::format("{}: {} = {}: --{} takes {}, not {}{}", where(value), label,
                                       as_toml(value), name, expected, describe(value.type()),
                                       hint));
  }

  // A relative path in the file means relative to the file's folder, wherever the program runs.
  std::string input(const toml::node& value, const OptionKind& kind) const {
    std::string text = as_text(value);
    if (!kind.path || text.empty() || std::filesystem::path(text).is_absolute()) return text;
    return (folder_ / text).string();
  }

  [[noreturn]] void refuse_unknown(const std::string& name, const toml::node& value) const {
    std::string message = fmt::format("{}: unknown key '{}'", where(value), name);
    if (const std::string replacement = renamed_option(app_, name); !replacement.empty()) {
      message += "; it is now " + replacement;
    } else if (const std::string suggestion = closest_option(app_, name); !suggestion.empty()) {
      message += "; did you mean '" + suggestion + "'?";
    }
    message += " (" + app_.get_name() + " --help lists every option)";
    throw CLI::ConfigError(message);
  }

  std::string where(const toml::node& node) const {
    return fmt::format("{}:{}", file_, node.source().begin.line);
  }

  const CLI::App& app_;
  const std::string file_;
  const std::filesystem::path folder_;
  std::vector<CLI::ConfigItem> items_;
};

}  // namespace

std::vector<CLI::ConfigItem> read_config(const CLI::App& app, std::istream& input,
                                         const std::string& file) {
  toml::table document;
  try {
    document = toml::parse(input, file);
  } catch (const toml::parse_error& e) {
    const toml::source_position& at = e.source().begin;
    throw CLI::ConfigError(fmt::format("{}:{}:{}: {}", file, at.line, at.column, e.description()));
  }
  Reader reader(app, file);
  reader.read(document, "");
  return reader.take_items();
}

std::vector<CLI::ConfigItem> TomlConfig::from_config(std::istream& input) const {
  // CLI11 opens the file and hands over only the stream: the file's name is --config's value.
  const CLI::Option* config = app_.get_config_ptr();
  const std::string file =
      config != nullptr && !config->empty() ? config->as<std::string>() : "config";
  return read_config(app_, input, file);
}

}  // namespace loco::cli
