#pragma once
// The "did you mean" of an unknown config key.

#include <CLI/CLI.hpp>
#include <string>

namespace loco::cli {

// The option name closest to `name` by edit distance, or "" when nothing is close.
std::string closest_option(const CLI::App& app, const std::string& name);

}  // namespace loco::cli
