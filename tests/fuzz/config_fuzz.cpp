// Fuzz target: TOML config files through the strict flat reader (loco/cli/flat_toml_config.hpp).

#include <cstdint>
#include <sstream>
#include <string>

#include "fuzz_seeds.hpp"
#include "loco/cli/app.hpp"

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  const std::string seeds[] = {
      "log-level = \"debug\"\nport = 9000\n[link]\nupload = \"100Mbit\"\nlatency = \"40ms\"\n",
      "peers = [\"a\", \"b\", 'c']\n# comment\nverbose = true\n",
      "[link]\n[[link]]\nupload=1\n",
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
  std::string upload;
  std::string latency;
  std::vector<std::string> peers;
  bool verbose = false;
  app.add_option("--port", port)->check(CLI::Range(1, 65535));
  app.add_option("--link.upload", upload);
  app.add_option("--link.latency", latency);
  app.add_option("--peers", peers);
  app.add_flag("--verbose", verbose);
  std::istringstream input(std::string(reinterpret_cast<const char*>(data), size));
  try {
    auto items = app.get_config_formatter()->from_config(input);
    (void)items;
  } catch (const CLI::Error&) {
    // Rejected with a message: the expected outcome for malformed input.
  }
  return 0;
}
