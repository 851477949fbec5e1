#include "loco/cli/keygen.hpp"

#include "loco/secure/identity.hpp"

namespace loco::cli {

void add_keygen_command(CLI::App& app, KeygenOptions& options) {
  options.command = app.add_subcommand(
      "keygen", "Write a new Ed25519 identity key file (mode 0600) and print its public key");
  options.command->add_option("--out", options.out, "Key file to create")->required();
  options.command->add_flag("--force", options.force, "Replace the file if it exists");
}

std::string run_keygen(const KeygenOptions& options) {
  const auto key = secure::KeyPair::generate();
  secure::write_key_file(options.out, key, options.force);
  return secure::to_hex(key.public_key());
}

}  // namespace loco::cli
