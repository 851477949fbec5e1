#pragma once
// The `keygen` subcommand shared by loco-peer and loco-tracker: writes a new Ed25519 identity
// key file (mode 0600; see loco/secure/identity.hpp) and gives back its public key.

#include <CLI/CLI.hpp>
#include <string>

#include "loco/secure/identity.hpp"

namespace loco::cli {

struct KeygenOptions {
  CLI::App* command = nullptr;  // set by add_keygen_command; parsed() tells whether it ran
  std::string out;
  bool force = false;
};

// `owner` says whose key the program makes: the tracker's help warns what replacing it costs.
void add_keygen_command(CLI::App& app, KeygenOptions& options, secure::KeyOwner owner);

// The subcommand's whole run, for a program's main(): writes the key file and prints its public
// key (hex) on stdout, or logs why it could not. Returns the process exit code.
int run_keygen(const KeygenOptions& options);

}  // namespace loco::cli
