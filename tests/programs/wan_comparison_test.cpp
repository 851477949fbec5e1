// The simulated WAN experiment's short version (bench/wan-diloco-vs-ddp.sh is the long one): a real
// loco-tracker and 4 real loco-peer processes on loopback, every peer's link shaped to 100 Mbit/s
// and 10 ms one way, train the tiny GPT for 40 steps with DiLoCo (H = 20, int8) and then with the
// data-parallel baseline (fp32 every step); then with Streaming DiLoCo and with DeMo. Nothing here
// depends on the machine's speed: both runs' validation losses fall below the starting model's,
// every peer of a run ends with the same state hash, and DiLoCo sends at least 20× fewer bytes than
// DDP (the ring's bytes alone differ by H × 4 bytes per value / ~1.02 ≈ 79×; connection set-up
// makes up the rest).

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/run_settings.hpp"

namespace loco {
namespace {

using test::program;

constexpr int kPeers = 4;

// The run config: configs/swarm-tiny.toml with 40 steps and `strategy` as its [strategy] section.
std::filesystem::path write_config(const std::filesystem::path& dir, const std::string& name,
                                   const std::string& strategy) {
  std::istringstream in(test::read_text(std::string(LOCO_SOURCE_DIR) + "/configs/swarm-tiny.toml"));
  const auto path = dir / (name + ".toml");
  std::ofstream out(path);
  for (std::string line; std::getline(in, line) && line != "[strategy]";)
    out << (line.starts_with("steps = ") ? "steps = 40" : line) << "\n";
  out << "[strategy]\n" << strategy;
  return path;
}

// "peer ID: seconds=… sent_bytes=… val_loss=… state=…" as key → value.
std::map<std::string, std::string> parse_summary(const std::string& line) {
  std::map<std::string, std::string> values;
  std::istringstream words(line);
  for (std::string word; words >> word;)
    if (const auto equals = word.find('='); equals != std::string::npos && equals > 0)
      values[word.substr(0, equals)] = word.substr(equals + 1);
  return values;
}

struct SwarmResult {
  std::vector<std::map<std::string, std::string>> peers;
  std::uint64_t sent_bytes = 0;
  float start_loss = 0;  // the initial model's validation loss
};

SwarmResult run_swarm(const std::filesystem::path& dir, const std::string& kind,
                      const std::string& strategy) {
  std::filesystem::create_directories(dir);
  const auto config_path = write_config(dir, kind, strategy);
  SwarmResult result;
  const train::TrainConfig config = cli::load_train_config(config_path);
  const train::Corpus corpus(config.data, static_cast<std::uint32_t>(config.model.gpt.vocab));
  result.start_loss = train::InnerLoop(config, corpus).evaluate();

  test::TrackerProcess tracker(
      dir, kind,
      {"--run.config", config_path.string(), "--run.min-peers", "4", "--run.shard-count", "4"});
  EXPECT_TRUE(tracker.started()) << tracker.log();
  if (!tracker.started()) return result;
  std::vector<std::unique_ptr<test::ChildProcess>> peers;
  for (int i = 0; i < kPeers; ++i) {
    const auto key = dir / ("peer" + std::to_string(i) + ".key");
    secure::write_key_file(key, secure::KeyPair::generate(), false);
    peers.push_back(std::make_unique<test::ChildProcess>(
        std::vector<std::string>{program("loco-peer"), "--peer.key", key.string(), "--run.id", kind,
                                 "--run.config", config_path.string(), "--tracker.address",
                                 tracker.address(), "--tracker.public-key", tracker.public_key(),
                                 "--link.upload", "100Mbit", "--link.latency", "10ms"},
        dir / ("peer" + std::to_string(i) + ".log")));
  }
  for (int i = 0; i < kPeers; ++i) {
    std::string line;
    do line = peers[i]->read_line(test::kLinePatienceMs);
    while (!line.empty() && line.find(": seconds=") == std::string::npos);
    EXPECT_FALSE(line.empty()) << kind << " peer " << i << ": no summary line\n"
                               << test::read_text(dir / ("peer" + std::to_string(i) + ".log"));
    if (line.empty()) continue;
    result.peers.push_back(parse_summary(line));
    result.sent_bytes += std::stoull(result.peers.back().at("sent_bytes"));
  }
  return result;
}

void expect_learned_in_step(const SwarmResult& run, const std::string& kind) {
  ASSERT_EQ(run.peers.size(), static_cast<std::size_t>(kPeers)) << kind;
  for (const auto& peer : run.peers) {
    EXPECT_EQ(peer.at("state"), run.peers[0].at("state")) << kind << ": every peer, one state";
    EXPECT_LT(std::stof(peer.at("val_loss")), run.start_loss) << kind << ": the loss falls";
  }
}

TEST(WanComparison, DiLoCoSendsFarLessThanDdpAndBothLearnInStep) {
  test::TempDir dir;
  const SwarmResult diloco =
      run_swarm(dir.path() / "diloco", "diloco",
                "kind = \"diloco\"\ndiloco-h = 20\nouter-lr = 0.7\nouter-momentum = 0.9\n"
                "codec = \"int8:block=256\"\ntracker-paced = false\n");
  const SwarmResult ddp =
      run_swarm(dir.path() / "ddp", "ddp", "kind = \"ddp\"\ncodec = \"fp32\"\n");
  expect_learned_in_step(diloco, "diloco");
  expect_learned_in_step(ddp, "ddp");
  EXPECT_GE(ddp.sent_bytes, 20 * diloco.sent_bytes)
      << "DDP sent " << ddp.sent_bytes << " bytes, DiLoCo " << diloco.sent_bytes;
  std::printf("DiLoCo sent %llu bytes, DDP %llu (%.1fx); val loss %s vs %s (start %.4f)\n",
              static_cast<unsigned long long>(diloco.sent_bytes),
              static_cast<unsigned long long>(ddp.sent_bytes),
              static_cast<double>(ddp.sent_bytes) / static_cast<double>(diloco.sent_bytes),
              diloco.peers.empty() ? "-" : diloco.peers[0].at("val_loss").c_str(),
              ddp.peers.empty() ? "-" : ddp.peers[0].at("val_loss").c_str(), diloco.start_loss);
}

// Issue 11's strategies on the same shaped links: Streaming DiLoCo (H = 20, P = 2, τ = 2, fp4
// fragments: 3 fragment rounds land in 40 steps) and DeMo (chunk 32, k 4, signs: 40 rounds).
TEST(WanComparison, StreamingDiLoCoAndDeMoLearnInStep) {
  test::TempDir dir;
  const SwarmResult streaming =
      run_swarm(dir.path() / "streaming", "streaming",
                "kind = \"streaming\"\ndiloco-h = 20\nfragments = 2\ntau = 2\nalpha = 0.5\n"
                "outer-lr = 0.7\nouter-momentum = 0.9\nfragment-codec = \"fp4:block=64\"\n");
  expect_learned_in_step(streaming, "streaming");
  const SwarmResult demo =
      run_swarm(dir.path() / "demo", "demo",
                "kind = \"demo\"\ndemo-chunk = 32\ndemo-topk = 4\ndemo-values = \"sign\"\n");
  expect_learned_in_step(demo, "demo");
}

}  // namespace
}  // namespace loco
