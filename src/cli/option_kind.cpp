#include "option_kind.hpp"

namespace loco::cli {

OptionKind option_kind(const CLI::Option& option) {
  OptionKind kind;
  kind.many = option.get_items_expected_max() > 1;
  // A flag expects no value on the command line (CLI11 reads a config's value for it as a flag).
  if (option.get_expected_min() == 0) {
    kind.value = ValueKind::boolean;
    return kind;
  }
  // Each validator appends ":ITS-DESCRIPTION" to the type name; the part before is the type's.
  const std::string type_name = option.get_type_name();
  const std::string type = type_name.substr(0, type_name.find(':'));
  kind.path = type == kPathTypeName;
  if (type == "TEXT" || kind.path) {
    kind.value = ValueKind::string;
  } else if (type == "INT" || type == "UINT") {
    kind.value = ValueKind::integer;
  } else if (type == "FLOAT") {
    kind.value = ValueKind::number;
  } else if (type == "BOOLEAN") {
    kind.value = ValueKind::boolean;
  }
  return kind;
}

std::string describe(ValueKind kind) {
  switch (kind) {
    case ValueKind::boolean: return "true or false";
    case ValueKind::integer: return "an integer";
    case ValueKind::number: return "a number";
    case ValueKind::string: return "a string";
    case ValueKind::any: break;
  }
  return "a value";
}

}  // namespace loco::cli
