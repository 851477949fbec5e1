// Fuzz target: TOML config files through the strict reader (loco/cli/toml_config.hpp). Every
// input is read into items or refused with CLI::ConfigError; nothing else may escape, and every
// item read names an option of the program.

#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_seeds.hpp"
#include "loco/cli/app.hpp"
#include "loco/cli/toml_config.hpp"
#include "loco/core/assert.hpp"

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  const std::string seeds[] = {
      "log-level = \"debug\"\nport = 9000\nrate = 0.5\nverbose = true\n"
      "[link]\nupload = \"100Mbit\"\nlatency = \"40ms\"\n",
      "peers = [\"a\", \"b\", 'c']\n# comment\nkey = \"keys/peer.key\"\n",
      "[model.gpt]\nlayers = 4\n[store]\nstate-file = \"/var/lib/loco/state\"\n",
      "link = { upload = \"1Gbit\", latency = '''2s''' }\nmodel.gpt.layers = 2\n",
      "port = \"seven\"\npeers = [1, [2]]\nverbose = 1979-05-27T07:32:00Z\n",
      "[link]\n[[link]]\nupload = \"unterminated\n",
  };
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& s : seeds) out.emplace_back(s.begin(), s.end());
  return out;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  CLI::App app{"fuzz"};
  loco::cli::CommonOptions common;
  loco::cli::add_common_options(app, common);
  int port = 0;
  double rate = 0;
  std::string upload;
  std::string latency;
  unsigned layers = 0;
  std::string key;
  std::string state_file;
  std::vector<std::string> peers;
  bool verbose = false;
  app.add_option("--port", port)->check(CLI::Range(1, 65535));
  app.add_option("--rate", rate);
  app.add_option("--link.upload", upload);
  app.add_option("--link.latency", latency);
  app.add_option("--model.gpt.layers", layers);
  app.add_option("--peers", peers);
  loco::cli::add_path_option(app, "--key", key, "a file");
  loco::cli::add_path_option(app, "--store.state-file", state_file, "a file");
  app.add_flag("--verbose", verbose);
  std::istringstream input(std::string(reinterpret_cast<const char*>(data), size));
  try {
    for (const CLI::ConfigItem& item : loco::cli::read_config(app, input, "fuzz/config.toml")) {
      LOCO_ASSERT(app.get_option_no_throw("--" + item.name) != nullptr,
                  "the reader let through a key that names no option");
    }
  } catch (const CLI::ConfigError&) {
    // Refused with a message: the expected outcome for malformed input.
  }
  return 0;
}
