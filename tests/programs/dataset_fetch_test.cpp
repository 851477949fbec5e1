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
#include "../support/english_text.hpp"
#include "../support/local_swarm.hpp"
#include "../support/run_prepare.hpp"

namespace loco {
namespace {

namespace fs = std::filesystem;
using test::PeerProcess;
using test::run_prepare;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// The run's config; `mirrors` a TOML array's items ("" for none: the tracker's own).
std::string fetch_run_config(const fs::path& path, const std::string& hash,
                             const std::string& mirrors, std::uint64_t rounds) {
  std::ofstream(path) << "log-level = \"info\"\n"
                         "[model]\nkind = \"gpt\"\nvocab = 400\ncontext = 32\nn-layer = 1\n"
                         "n-head = 2\nd-model = 32\n"
                         "[data]\nsource = \"dataset\"\nmanifest-hash = \""
                      << hash << "\"\n"
                      << (mirrors.empty() ? "" : "mirrors = [" + mirrors + "]\n")
                      << "[optim]\nlr = 3e-3\nmin-lr = 3e-4\nwarmup-steps = 4\n"
                         "[train]\nsteps = "
                      << rounds * test::kInnerSteps
                      << "\nbatch = 8\nseed = 1\nthreads = 1\neval-every = 0\neval-batches = 2\n"
                      << test::kDiLoCoStrategy;
  return path.string();
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
  std::ofstream(dir / "text.txt", std::ios::binary) << test::english_text(2000);
  const fs::path data = dir / "data";
  const std::string prepared =
      run_prepare("--input " + (dir / "text.txt").string() + " --out-dir " + data.string() +
                  " --tokenizer sentencepiece --tokenizer.vocab 400 --shard-tokens 4096");
  const auto at = prepared.find("manifest-hash: ");
  ASSERT_NE(at, std::string::npos) << prepared;
  const std::string hash = prepared.substr(at + 15, 64);

  // The mirror's copy: its first shard lost a bit on the way.
  fs::copy(data, dir / "mirror", fs::copy_options::recursive);
  {
    std::fstream f(dir / "mirror" / "train-00000.bin",
                   std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(100);
    const char c = static_cast<char>(f.get());
    f.seekp(100);
    f.put(static_cast<char>(c ^ 0x10));
  }
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
