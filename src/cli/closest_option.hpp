#pragma once
// The "did you mean" of an unknown config key.

#include <CLI/CLI.hpp>
#include <string>

namespace loco::cli {

// The option name closest to `name` by edit distance, or "" when nothing is close.
std::string closest_option(const CLI::App& app, const std::string& name);

// What replaced `name`, an option of an earlier loco that a config may still hold, when `app` has
// the new option ("" otherwise): the new name and how to convert the value.
std::string renamed_option(const CLI::App& app, const std::string& name);

}  // namespace loco::cli
