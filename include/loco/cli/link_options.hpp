#pragma once
// Wires LinkSettings into a program's options: --link.upload, --link.download, --link.latency,
// --link.jitter, --link.stream-window, --link.drop-after-bytes, --link.drop-at and
// --link.stall-at, which a config file sets from its [link] section (cli/app.hpp). Usage:
//
//   loco::cli::LinkOptions link;
//   loco::cli::add_link_options(app, link);
//   if (auto code = loco::cli::parse(app, argc, argv)) return *code;
//   const loco::link::LinkSettings settings = loco::cli::to_link_settings(link);
//
// Each value is checked while CLI11 parses (a typo is reported like any other bad option, with
// the option's name, the value and valid examples); to_link_settings() then checks the values
// against each other and throws Error(config) if they disagree.
//
// CLI::App is only forward-declared here: CLI11 is slow to compile, so only link_options.cpp
// includes it.

#include <string>

#include "loco/link/settings.hpp"

namespace CLI {
class App;
}

namespace loco::cli {

// The raw option strings; "" means the option was not given.
struct LinkOptions {
  std::string upload = "unlimited";
  std::string download = "unlimited";
  std::string latency = "0";
  std::string jitter = "0";
  std::string stream_window;
  std::string drop_after_bytes;
  std::string drop_at;
  std::string stall_at;
};

void add_link_options(CLI::App& app, LinkOptions& options);

// Parses and validates; throws Error(config) naming the option and the value.
link::LinkSettings to_link_settings(const LinkOptions& options);

}  // namespace loco::cli
