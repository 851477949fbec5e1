#pragma once
// What value a config file may give an option, read from what CLI11 knows about it: a flag takes
// true or false, an INT or UINT option an integer, a FLOAT option a number, a TEXT or PATH option
// a string, and an option that takes several values (a vector) also an array of them. The config
// reader checks each TOML value against it, so `id = 42` for a string option is refused instead
// of quietly converted.

#include <CLI/CLI.hpp>
#include <string>

namespace loco::cli {

// The type name add_path_option gives its options; option_kind() recognises it.
inline constexpr const char* kPathTypeName = "PATH";

enum class ValueKind { boolean, integer, number, string, any };

struct OptionKind {
  ValueKind value = ValueKind::any;
  bool many = false;  // takes several values: an array is fine
  bool path = false;  // a file or folder: a relative path is resolved from the config's folder
};

OptionKind option_kind(const CLI::Option& option);

// "true or false", "an integer", ... for messages.
std::string describe(ValueKind kind);

}  // namespace loco::cli
