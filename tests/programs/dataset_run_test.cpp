// A dataset made by a real loco-prepare (a SentencePiece model trained on a text the test writes,
// shards, a manifest) trained on by real loco-peer processes, one reading the organiser's folder,
// one a copy of it elsewhere (--peer.dataset), and a third whose copy has a corrupted shard and
// which stops before training, naming the shard.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../support/english_text.hpp"
#include "../support/local_swarm.hpp"
#include "../support/run_prepare.hpp"

namespace loco {
namespace {

using test::PeerProcess;
using test::run_prepare;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string run_config(const std::filesystem::path& dir, const std::string& manifest,
                       const std::string& hash, std::uint64_t rounds) {
  const auto path = dir / "run.toml";
  std::ofstream(path) << "log-level = \"info\"\n"
                         "[model]\nkind = \"gpt\"\nvocab = 400\ncontext = 32\nn-layer = 1\n"
                         "n-head = 2\nd-model = 32\n"
                         "[data]\nsource = \"dataset\"\nmanifest = \""
                      << manifest << "\"\nmanifest-hash = \"" << hash
                      << "\"\n[optim]\nlr = 3e-3\nmin-lr = 3e-4\nwarmup-steps = 4\n"
                         "[train]\nsteps = "
                      << rounds * test::kInnerSteps
                      << "\nbatch = 8\nseed = 1\nthreads = 1\neval-every = 0\neval-batches = 2\n"
                      << test::kDiLoCoStrategy;
  return path.string();
}

TEST(DatasetRun, PeersTrainFromACheckedDatasetAndACorruptedCopyIsRefused) {
  test::TempDir dir;
  std::ofstream(dir / "text.txt", std::ios::binary) << test::english_text(2000);
  const std::filesystem::path data = dir / "data";
  const std::string prepared =
      run_prepare("--input " + (dir / "text.txt").string() + " --out-dir " + data.string() +
                  " --tokenizer sentencepiece --tokenizer.vocab 400 --shard-tokens 4096");
  const auto at = prepared.find("manifest-hash: ");
  ASSERT_NE(at, std::string::npos) << prepared;
  const std::string hash = prepared.substr(at + 15, 64);

  // A volunteer's copy elsewhere, and one whose first shard lost a bit on the way.
  namespace fs = std::filesystem;
  fs::copy(data, dir / "copy", fs::copy_options::recursive);
  fs::copy(data, dir / "bad", fs::copy_options::recursive);
  {
    std::fstream f(dir / "bad" / "train-00000.bin",
                   std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(100);
    const char c = static_cast<char>(f.get());
    f.seekp(100);
    f.put(static_cast<char>(c ^ 0x10));
  }

  constexpr std::uint64_t kRounds = 3;
  const std::string config =
      run_config(dir.path(), (data / "manifest.txt").string(), hash, kRounds);
  std::vector<std::string> tracker_options = test::kSwarmTimers;
  tracker_options.insert(tracker_options.end(), {"--run.min-peers", "2"});
  test::TrackerProcess tracker(dir.path(), "run-data", tracker_options, "127.0.0.1:0", config);
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const test::SwarmRun run{.dir = dir.path(),
                           .run_id = "run-data",
                           .config = config,
                           .tracker_address = tracker.address(),
                           .tracker_key = tracker.public_key()};

  PeerProcess bad(run, "bad", {"--peer.dataset", (dir / "bad").string()});
  bad.read_to_end();
  EXPECT_NE(bad.process().wait(), 0) << bad.log();
  EXPECT_THAT(bad.log(), AllOf(HasSubstr("train-00000.bin"), HasSubstr("fails its BLAKE2b")));

  PeerProcess a(run, "a");
  PeerProcess b(run, "b", {"--peer.dataset", (dir / "copy").string()});
  for (PeerProcess* p : {&a, &b}) {
    EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << p->log();
    EXPECT_EQ(p->process().wait(), 0) << p->log();
    // What a volunteer checks by eye: its dataset shards and a sample of their text.
    EXPECT_THAT(p->log(), AllOf(HasSubstr("dataset shards train-"), HasSubstr("sample: \"")))
        << p->log();
  }
  EXPECT_TRUE(test::same_states({&a, &b}, 1, kRounds)) << a.log() << b.log();
}

}  // namespace
}  // namespace loco
