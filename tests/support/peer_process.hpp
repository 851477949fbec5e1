#pragma once
// Real loco-peer processes for a test, and the small DiLoCo run they train: a one-layer GPT on a
// Markov corpus, four inner steps a round, so a round takes milliseconds of compute and a test
// spends its time on the protocol. A peer's stdout is read line by line: after each round it
// prints "round R committed|skipped|replaced members M loss L state H" (peer/swarm_peer.hpp),
// which the test waits on and records; its log (stderr) goes to a file.

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "tracker_process.hpp"

namespace loco::test {

// Hang guard for a state awaited over many lines (a peer that prints rounds but never gets there).
inline constexpr auto kRoundPatience = std::chrono::minutes(10);
inline constexpr std::uint64_t kInnerSteps = 4;

// The [strategy] of a DiLoCo run of H = `h` inner steps, a round every `h` steps (not the
// default's rounds paced by the tracker: the tests count steps and rounds exactly).
inline std::string diloco_strategy(std::uint64_t h) {
  return "[strategy]\nkind = \"diloco\"\ndiloco-h = " + std::to_string(h) +
         "\nouter-lr = 0.7\nouter-momentum = 0.9\ncodec = \"int8:block=256\"\n"
         "tracker-paced = false\n";
}

// The [strategy] of the tests' run: DiLoCo over kInnerSteps steps.
inline const std::string kDiLoCoStrategy = diloco_strategy(kInnerSteps);

// The [strategy] of a Streaming DiLoCo run: H = `h`, `fragments` fragments, each landing `tau`
// steps after it leaves, eager updates `eager` (none, overlapped, delayed).
inline std::string streaming_strategy(std::uint64_t h = kInnerSteps, std::uint64_t tau = 1,
                                      std::size_t fragments = 2,
                                      const std::string& eager = "none") {
  return "[strategy]\nkind = \"streaming\"\ndiloco-h = " + std::to_string(h) +
         "\nfragments = " + std::to_string(fragments) + "\ntau = " + std::to_string(tau) +
         "\neager = \"" + eager + "\"" +
         "\nalpha = 0.5\nouter-lr = 0.7\nouter-momentum = 0.9\nfragment-codec = \"fp4:block=64\"\n";
}

// The [strategy] of a DeMo run: a round every step, chunks of 16 per dimension, 4 components kept,
// their signs (the tests' model has d 32); `late`: each step's all-gather overlaps the next step.
inline std::string demo_strategy(bool late) {
  return std::string("[strategy]\nkind = \"demo\"\ndemo-chunk = 16\ndemo-topk = 4\n") +
         "demo-values = \"sign\"\ndemo-late = " + (late ? "true" : "false") + "\n";
}

// Writes the run config to `dir`/swarm.toml: `rounds` x kInnerSteps steps, with `strategy`.
inline std::string write_swarm_config(const std::filesystem::path& dir, std::uint64_t rounds,
                                      const std::string& strategy = kDiLoCoStrategy) {
  const auto path = dir / "swarm.toml";
  std::ofstream(path) << "log-level = \"info\"\n"
                         "[model]\nkind = \"gpt\"\nvocab = 32\ncontext = 32\nn-layer = 1\n"
                         "n-head = 2\nd-model = 32\n"
                         "[data]\nsource = \"markov\"\nmarkov-order = 1\nmarkov-successors = 4\n"
                         "markov-uniform-mix = 0.02\nmarkov-seed = 1\n"
                         "markov-train-tokens = 200000\nmarkov-val-tokens = 8000\n"
                         "[optim]\nlr = 3e-3\nmin-lr = 3e-4\nwarmup-steps = 4\n"
                         "weight-decay = 0.1\ngrad-clip = 1.0\n"
                         "[train]\nsteps = "
                      << rounds * kInnerSteps
                      << "\nbatch = 8\nseed = 1\nthreads = 1\nlog-every = 1000\n"
                         "eval-every = 0\neval-windows = 16\ncheckpoint-every = 0\n"
                      << strategy;
  return path.string();
}

// One "round ..." line of a peer.
struct RoundLine {
  std::uint64_t round = 0;
  std::string kind;  // committed, skipped, replaced
  std::size_t members = 0;
  double loss = 0;
  std::string state;  // 16 hex digits
  double share = 0;   // this peer's share of a weighted round's mean; 0: the plain mean
  double phase = 0;   // seconds of the next phase, as the tracker set it; 0: not paced

  static std::optional<RoundLine> parse(const std::string& line) {
    std::istringstream in(line);
    RoundLine r;
    std::string word, members, loss, state;
    if (!(in >> word) || word != "round") return std::nullopt;
    if (!(in >> r.round >> r.kind >> members >> r.members >> loss >> r.loss >> state >> r.state))
      return std::nullopt;
    while (in >> word) {
      if (word == "share") in >> r.share;
      if (word == "phase") in >> r.phase;
    }
    return r;
  }
};

// A peer's closing line: "peer K: round R, step S, validation loss L, ..., state H".
struct PeerEnd {
  std::uint64_t round = 0;
  std::uint64_t step = 0;
  std::string state;  // 16 hex digits

  static std::optional<PeerEnd> parse(const std::string& line) {
    const auto round = line.find(": round "), step = line.find(", step "),
               state = line.rfind(", state ");
    if (!line.starts_with("peer ") || round == std::string::npos || step == std::string::npos ||
        state == std::string::npos)
      return std::nullopt;
    return PeerEnd{.round = std::stoull(line.substr(round + 8)),
                   .step = std::stoull(line.substr(step + 7)),
                   .state = line.substr(state + 8)};
  }
};

// The mean loss of `n` round lines from index `first`.
inline double mean_loss(const std::vector<RoundLine>& rounds, std::size_t first, std::size_t n) {
  double sum = 0;
  for (std::size_t i = first; i < first + n; ++i) sum += rounds.at(i).loss;
  return sum / static_cast<double>(n);
}

// What every peer of a test is given: the tracker, the run, the config.
struct SwarmRun {
  std::filesystem::path dir;
  std::string run_id;
  std::string config;
  std::string tracker_address;
  std::string tracker_key;
};

class PeerProcess {
 public:
  // Starts loco-peer `name` (its key, log and checkpoint in run.dir) with `extra` options last;
  // `wrapper` goes before the program (e.g. `ip netns exec NS`).
  PeerProcess(const SwarmRun& run, const std::string& name,
              const std::vector<std::string>& extra = {},
              const std::vector<std::string>& wrapper = {})
      : log_(run.dir / (name + ".log")) {
    const auto key = run.dir / (name + ".key");
    if (!std::filesystem::exists(key))
      secure::write_key_file(key, secure::KeyPair::generate(), false);
    std::vector<std::string> argv = {
        program("loco-peer"), "--peer.key",           key.string(),   "--run.id",
        run.run_id,           "--run.config",         run.config,     "--tracker.address",
        run.tracker_address,  "--tracker.public-key", run.tracker_key};
    if (std::find(extra.begin(), extra.end(), "--peer.listen") == extra.end())
      argv.insert(argv.end(), {"--peer.listen", "127.0.0.1:0"});
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.begin(), wrapper.begin(), wrapper.end());
    process_ = std::make_unique<ChildProcess>(argv, log_);
  }

  // Reads lines until one starts with `prefix` and returns it; "" once the output ends or the
  // guard runs out. Every round line on the way is recorded.
  std::string wait_for(const std::string& prefix) {
    for (;;) {
      const std::string line = process_->read_line(kLinePatienceMs);
      if (line.empty()) return "";
      if (auto r = RoundLine::parse(line)) rounds_.push_back(*r);
      if (line.starts_with(prefix)) return line;
    }
  }
  // Waits until this peer holds the state of round `round` or a later one.
  bool wait_round(std::uint64_t round) {
    return wait_until([&] { return !rounds_.empty() && rounds_.back().round >= round; });
  }
  // Waits until this peer has committed a round after `round`.
  bool wait_until_committed_after(std::uint64_t round) {
    return wait_until([&] { return !committed().empty() && committed().rbegin()->first > round; });
  }
  // Waits until this peer has committed a round (a newcomer: once it is in the run's groups).
  bool wait_committed() {
    return wait_until([&] { return !committed().empty(); });
  }
  // Reads up to its closing line (PeerEnd); nothing if its output ends first or a line is not
  // awaited in time.
  std::optional<PeerEnd> wait_end() { return PeerEnd::parse(wait_for("peer ")); }
  // Reads to the end of the output (the process is ending) and returns the last line.
  std::string read_to_end() {
    std::string last;
    for (std::string line = wait_for(""); !line.empty(); line = wait_for("")) last = line;
    return last;
  }

  const std::vector<RoundLine>& rounds() const { return rounds_; }
  // Round -> state hash of the rounds this peer committed.
  std::map<std::uint64_t, std::string> committed() const {
    std::map<std::uint64_t, std::string> out;
    for (const RoundLine& r : rounds_)
      if (r.kind == "committed") out[r.round] = r.state;
    return out;
  }
  std::string log() const { return read_text(log_); }
  // The round of the first "fetching the state of round N" line of its log; nothing if none yet.
  std::optional<std::uint64_t> first_fetch() const {
    const std::string marker = "fetching the state of round ";
    const std::string text = log();
    const auto at = text.find(marker);
    if (at == std::string::npos) return std::nullopt;
    return std::stoull(text.substr(at + marker.size()));
  }
  ChildProcess& process() { return *process_; }

 private:
  // Reads round lines until `done()`; false once the output ends, a line is not awaited in time,
  // or kRoundPatience passes.
  template <typename Done>
  bool wait_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + kRoundPatience;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline || wait_for("round ").empty()) return false;
    }
    return true;
  }

  std::filesystem::path log_;
  std::unique_ptr<ChildProcess> process_;
  std::vector<RoundLine> rounds_;
};

}  // namespace loco::test
