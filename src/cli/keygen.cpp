#include "loco/cli/keygen.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "loco/cli/app.hpp"
#include "loco/core/error.hpp"
#include "loco/secure/identity.hpp"

namespace loco::cli {

void add_keygen_command(CLI::App& app, KeygenOptions& options, secure::KeyOwner owner) {
  options.command = app.add_subcommand(
      "keygen", "Write a new Ed25519 identity key file (mode 0600) and print its public key");
  add_path_option(*options.command, "--out", options.out, "Key file to create")->required();
  options.command->add_flag("--force", options.force,
                            owner == secure::KeyOwner::tracker
                                ? "Replace the file (or symbolic link) if it exists; every peer "
                                  "must then update its pinned [tracker] public-key"
                                : "Replace the file (or symbolic link) if it exists");
}

int run_keygen(const KeygenOptions& options) {
  try {
    const auto key = secure::KeyPair::generate();
    secure::write_key_file(options.out, key, options.force);
    std::printf("%s\n", secure::to_hex(key.public_key()).c_str());
    return 0;
  } catch (const Error& e) {
    spdlog::error("keygen: {}", e.what());
    return 1;
  }
}

}  // namespace loco::cli
