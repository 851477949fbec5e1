#pragma once
// A real loco-tracker process for a test: its key in the test's directory, the run config of
// configs/tiny.toml unless the test gives another, an open run unless the test says otherwise, and
// the address and key it printed on its first line.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "loco/secure/identity.hpp"

namespace loco::test {

inline std::string program(const char* name) {
  return std::string(LOCO_BIN_DIR) + "/" + name;
}

inline std::string run_config() {
  return std::string(LOCO_SOURCE_DIR) + "/configs/tiny.toml";
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// How many times `text` holds `part` (a log line counted, say).
inline std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// `options` ("--name value" pairs) with each name given once: a later pair replaces an earlier
// one with the same name (a program refuses an option given twice).
inline std::vector<std::string> merge_options(const std::vector<std::string>& options) {
  std::vector<std::string> merged;
  for (std::size_t i = 0; i + 1 < options.size(); i += 2) {
    auto it = merged.begin();
    while (it != merged.end() && *it != options[i]) it += 2;
    if (it == merged.end()) {
      merged.push_back(options[i]);
      merged.push_back(options[i + 1]);
    } else {
      *(it + 1) = options[i + 1];
    }
  }
  return merged;
}

// The tracker's timers of a swarm on loopback: short enough for a test, long enough for a loaded
// machine.
inline const std::vector<std::string> kSwarmTimers = {"--run.heartbeat-interval", "500ms",
                                                      "--run.eviction-timeout",   "5s",
                                                      "--run.join-timeout",       "30s"};

class TrackerProcess {
 public:
  // Starts loco-tracker for run `run_id` in `dir` (its key file, state file and log go there),
  // listening on `listen`, with `extra` options replacing or adding to the defaults, for the
  // run config `config`; `wrapper` goes before the program (e.g. `ip netns exec NS`).
  TrackerProcess(const std::filesystem::path& dir, const std::string& run_id,
                 const std::vector<std::string>& extra = {},
                 const std::string& listen = "127.0.0.1:0",
                 const std::string& config = run_config(),
                 const std::vector<std::string>& wrapper = {})
      : dir_(dir), log_(dir / "tracker.log") {
    if (!std::filesystem::exists(dir / "tracker.key"))
      secure::write_key_file(dir / "tracker.key", secure::KeyPair::generate(), false);
    std::vector<std::string> options = {
        "--tracker.key", (dir / "tracker.key").string(), "--tracker.listen", listen,
        "--tracker.state-file", (dir / "tracker.state").string(), "--run.id", run_id,
        "--run.config", config, "--admission.policy", "open", "--tracker.http", "127.0.0.1:0",
        // Every test peer comes from 127.0.0.1 (a test of the
        // cap sets its own).
        "--tracker.max-members-per-address", "0"};
    options.insert(options.end(), extra.begin(), extra.end());
    std::vector<std::string> argv = merge_options(options);
    argv.insert(argv.begin(), program("loco-tracker"));
    argv.insert(argv.begin(), wrapper.begin(), wrapper.end());
    process_ = std::make_unique<ChildProcess>(argv, log_);
    const std::string line = process_->read_line();  // "listening on HOST:PORT as KEY"
    const std::string prefix = "listening on ";
    const auto as = line.find(" as ");
    if (line.starts_with(prefix) && as != std::string::npos) {
      address_ = line.substr(prefix.size(), as - prefix.size());
      public_key_ = line.substr(as + 4);
    }
  }

  bool started() const { return !address_.empty(); }
  const std::string& address() const { return address_; }
  std::string port() const { return address_.substr(address_.rfind(':') + 1); }
  const std::string& public_key() const { return public_key_; }
  // HOST:PORT of its status page (logged before the line started() waits for), or "".
  std::string http_address() const {
    const std::string text = log();
    const std::string prefix = "status page at http://";
    const auto at = text.find(prefix);
    if (at == std::string::npos) return "";
    const auto begin = at + prefix.size();
    return text.substr(begin, text.find('/', begin) - begin);
  }
  std::string log() const { return read_text(log_); }
  ChildProcess& process() { return *process_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path log_;
  std::unique_ptr<ChildProcess> process_;
  std::string address_;
  std::string public_key_;
};

}  // namespace loco::test
