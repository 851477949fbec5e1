// A dataset made by a real loco-prepare (a SentencePiece model trained on a text the test writes,
// shards, a manifest) trained on by real loco-peer processes, one reading the organiser's folder,
// one a copy of it elsewhere (--peer.dataset), and a third whose copy has a corrupted shard and
// which stops before training, naming the shard.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "../support/dataset_runs.hpp"
#include "../support/local_swarm.hpp"

namespace loco {
namespace {

using test::PeerProcess;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(DatasetRun, PeersTrainFromACheckedDatasetAndACorruptedCopyIsRefused) {
  test::TempDir dir;
  const test::PreparedDataset prepared = test::prepare_english_dataset(dir.path());
  ASSERT_FALSE(prepared.hash.empty());
  const std::filesystem::path& data = prepared.folder;

  // A volunteer's copy elsewhere, and one whose first shard lost a bit on the way.
  namespace fs = std::filesystem;
  fs::copy(data, dir / "copy", fs::copy_options::recursive);
  fs::copy(data, dir / "bad", fs::copy_options::recursive);
  test::flip_a_bit(dir / "bad" / "train-00000.bin", 100);

  constexpr std::uint64_t kRounds = 3;
  const std::string config = test::write_dataset_run_config(
      dir / "run.toml", prepared.hash, "manifest = \"" + (data / "manifest.txt").string() + "\"\n",
      kRounds);
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
