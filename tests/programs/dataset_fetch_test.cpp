// Peers that start with empty data folders fetch the run's dataset (issue 46): from a mirror (a
// real HTTP server the test starts, Debian's python3 -m http.server, serving a copy with one
// corrupted shard) and from the tracker's HTTP server (--tracker.dataset). The corrupted shard is
// named, skipped, and fetched from the tracker; a peer whose cache holds half a shard from an
// interrupted download resumes it with a Range (and one whose half is garbage, fetches it again
// whole); both train the same states.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../support/child_process.hpp"
#include "../support/dataset_runs.hpp"
#include "../support/local_swarm.hpp"

namespace loco {
namespace {

namespace fs = std::filesystem;
using test::PeerProcess;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The run's config; `mirrors` a TOML array's items ("" for none: the tracker's own).
std::string fetch_run_config(const fs::path& path, const std::string& hash,
                             const std::string& mirrors, std::uint64_t rounds) {
  return test::write_dataset_run_config(
      path, hash, mirrors.empty() ? "" : "mirrors = [" + mirrors + "]\n", rounds);
}

// Debian's python3 serving `folder` on loopback; its base URL, "" when it did not start.
struct PythonMirror {
  explicit PythonMirror(const fs::path& folder, const fs::path& log)
      : process({"/usr/bin/python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                 "--directory", folder.string()},
                log) {
    const std::string line = process.read_line();  // "Serving HTTP on 127.0.0.1 port N (...)"
    const auto at = line.find("(http://");
    if (at != std::string::npos) url = line.substr(at + 1, line.find(')', at) - at - 1);
  }
  test::ChildProcess process;
  std::string url;
};

TEST(DatasetFetch, PeersFetchFromAMirrorAndTheTrackerSkippingACorruptedShardAndResuming) {
  test::TempDir dir;
  const test::PreparedDataset prepared = test::prepare_english_dataset(dir.path());
  ASSERT_FALSE(prepared.hash.empty());
  const fs::path& data = prepared.folder;
  const std::string& hash = prepared.hash;

  // The mirror's copy: its first shard lost a bit on the way.
  fs::copy(data, dir / "mirror", fs::copy_options::recursive);
  test::flip_a_bit(dir / "mirror" / "train-00000.bin", 100);
  PythonMirror mirror(dir / "mirror", dir / "mirror.log");
  ASSERT_FALSE(mirror.url.empty()) << test::read_text(dir / "mirror.log");

  constexpr std::uint64_t kRounds = 2;
  const std::string tracker_config = fetch_run_config(dir / "run.toml", hash, "", kRounds);
  std::vector<std::string> tracker_options = test::kSwarmTimers;
  tracker_options.insert(tracker_options.end(),
                         {"--run.min-peers", "2", "--tracker.dataset", data.string()});
  test::TrackerProcess tracker(dir.path(), "run-fetch", tracker_options, "127.0.0.1:0",
                               tracker_config);
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const std::string served = "\"http://" + tracker.http_address() + "/dataset/\"";

  // Peer a tries the mirror first, peer b the tracker first (mirrors are not among the run's
  // settings: each volunteer may list its nearest first).
  const std::string mirror_first =
      fetch_run_config(dir / "run-a.toml", hash, "\"" + mirror.url + "\", " + served, kRounds);
  const std::string tracker_first =
      fetch_run_config(dir / "run-b.toml", hash, served + ", \"" + mirror.url + "\"", kRounds);
  // Peer b was killed halfway through a shard: its .part holds the first half.
  const fs::path cache_b = dir / "cache-b" / hash.substr(0, 16);
  fs::create_directories(cache_b);
  const std::uint64_t shard_bytes = fs::file_size(data / "train-00001.bin");
  {
    std::ifstream in(data / "train-00001.bin", std::ios::binary);
    std::string half(shard_bytes / 2, '\0');
    in.read(half.data(), static_cast<std::streamsize>(half.size()));
    std::ofstream(cache_b / "train-00001.bin.part", std::ios::binary) << half;
  }
  // ... and a crash left the validation shard's .part with a tail that never reached the disk.
  const std::uint64_t val_bytes = fs::file_size(data / "val-00000.bin");
  std::ofstream(cache_b / "val-00000.bin.part", std::ios::binary)
      << std::string(val_bytes / 2, '\0');

  test::SwarmRun run{.dir = dir.path(),
                     .run_id = "run-fetch",
                     .config = mirror_first,
                     .tracker_address = tracker.address(),
                     .tracker_key = tracker.public_key()};
  PeerProcess a(run, "a", {"--peer.data-cache", (dir / "cache-a").string()});
  run.config = tracker_first;
  PeerProcess b(run, "b", {"--peer.data-cache", (dir / "cache-b").string()});
  for (PeerProcess* p : {&a, &b}) {
    EXPECT_TRUE(p->read_to_end().starts_with("peer ")) << p->log();
    EXPECT_EQ(p->process().wait(), 0) << p->log();
    EXPECT_THAT(p->log(), AllOf(HasSubstr("manifest " + hash.substr(0, 16) + " checked"),
                                HasSubstr("dataset shards train-")))
        << p->log();
  }
  // a: the mirror's corrupted shard named and skipped, fetched from the tracker; the rest from
  // the mirror.
  EXPECT_THAT(a.log(), AllOf(HasSubstr("source " + mirror.url +
                                       " skipped for train-00000.bin: the file "
                                       "fails its BLAKE2b check"),
                             HasSubstr("train-00000.bin checked"),
                             HasSubstr("train-00001.bin checked (" + std::to_string(shard_bytes) +
                                       " bytes, from " + mirror.url)))
      << a.log();
  // b: the half shard resumed from the tracker, with a Range; the bad .part fetched again whole,
  // the tracker not blamed for it.
  EXPECT_THAT(
      b.log(),
      AllOf(HasSubstr("train-00001.bin: resuming at byte " + std::to_string(shard_bytes / 2)),
            HasSubstr("val-00000.bin fails its BLAKE2b check after resuming at byte " +
                      std::to_string(val_bytes / 2)),
            HasSubstr("val-00000.bin checked"), Not(HasSubstr("skipped"))))
      << b.log();
  EXPECT_FALSE(fs::exists(cache_b / "train-00001.bin.part"));
  EXPECT_TRUE(test::same_states({&a, &b}, 1, kRounds)) << a.log() << b.log();
}

}  // namespace
}  // namespace loco
