#pragma once
// The `keygen` subcommand shared by loco-peer and loco-tracker: writes a new Ed25519 identity
// key file (mode 0600; see loco/secure/identity.hpp) and gives back its public key.

#include <CLI/CLI.hpp>
#include <string>

namespace loco::cli {

struct KeygenOptions {
  CLI::App* command = nullptr;  // set by add_keygen_command; parsed() tells whether it ran
  std::string out;
  bool force = false;
};

void add_keygen_command(CLI::App& app, KeygenOptions& options);

// Writes the key file; returns the public key in hex. Throws loco::Error.
std::string run_keygen(const KeygenOptions& options);

}  // namespace loco::cli
