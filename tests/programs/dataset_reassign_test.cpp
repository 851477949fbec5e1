// A peer whose data shard changes after it joined (issue 46) fetches the new shard's manifest
// shards and trains on them. The tracker gives a shard at each join: peer a, frozen (SIGSTOP, by
// --debug.stop-at) long enough to be evicted, loses its shard to newcomer c; thawed, it joins
// again and is given the one shard still free, 2 of 3. All three peers start with empty data
// folders and fetch from the tracker's HTTP server (--tracker.dataset).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <set>
#include <string>
#include <thread>

#include "../support/dataset_runs.hpp"
#include "../support/local_swarm.hpp"

namespace loco {
namespace {

namespace fs = std::filesystem;
using test::PeerProcess;
using ::testing::HasSubstr;

// How many times `text` holds `part`.
std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Waits (at most 60 s) until the tracker's log holds `part` `times` times.
bool tracker_logged(const test::TrackerProcess& tracker, const std::string& part,
                    std::size_t times) {
  for (int i = 0; i < 1200; ++i) {
    if (count_of(tracker.log(), part) >= times) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(DatasetReassign, APeerGivenAnotherShardWhenItJoinsAgainFetchesAndTrainsOnIt) {
  test::TempDir dir;
  const test::PreparedDataset prepared = test::prepare_english_dataset(dir.path());
  ASSERT_FALSE(prepared.hash.empty());
  const std::vector<std::string> new_shards = test::shards_of(prepared.folder, 2, 3);
  ASSERT_FALSE(new_shards.empty());

  constexpr std::uint64_t kRounds = 12;
  std::vector<std::string> tracker_options = test::kSwarmTimers;
  tracker_options.insert(tracker_options.end(), {"--run.min-peers", "2", "--run.shard-count", "3",
                                                 "--run.eviction-timeout", "2s",
                                                 "--tracker.dataset", prepared.folder.string()});
  const std::string tracker_config =
      test::write_dataset_run_config(dir / "run.toml", prepared.hash, "", kRounds);
  test::TrackerProcess tracker(dir.path(), "run-reassign", tracker_options, "127.0.0.1:0",
                               tracker_config);
  ASSERT_TRUE(tracker.started()) << tracker.log();
  const std::string config = test::write_dataset_run_config(
      dir / "peer.toml", prepared.hash,
      "mirrors = [\"http://" + tracker.http_address() + "/dataset/\"]\n", kRounds);
  const test::SwarmRun run{.dir = dir.path(),
                           .run_id = "run-reassign",
                           .config = config,
                           .tracker_address = tracker.address(),
                           .tracker_key = tracker.public_key()};
  const auto options = [&](const std::string& name) {
    return std::vector<std::string>{"--peer.data-cache", (dir / ("cache-" + name)).string(),
                                    "--debug.step-delay", "100"};
  };
  std::vector<std::string> a_options = options("a");
  a_options.insert(a_options.end(), {"--debug.stop-at", "mean:2"});
  PeerProcess a(run, "a", a_options);
  PeerProcess b(run, "b", options("b"));
  // a stops itself once round 2's mean is in; silent for 2 s, it is evicted and its shard freed.
  ASSERT_TRUE(tracker_logged(tracker, "evicted: silent", 1)) << tracker.log() << a.log();
  PeerProcess c(run, "c", options("c"));
  ASSERT_TRUE(tracker_logged(tracker, "(shard ", 3)) << tracker.log();  // c has a's shard
  ASSERT_EQ(::kill(a.process().pid(), SIGCONT), 0);

  for (PeerProcess* p : {&a, &b, &c}) {
    const std::optional<test::PeerEnd> end = p->wait_end();
    ASSERT_TRUE(end) << p->log();
    EXPECT_EQ(end->round, kRounds) << p->log();
    EXPECT_EQ(p->process().wait(), 0) << p->log();
  }
  EXPECT_THAT(tracker.log(), HasSubstr("(shard 2,")) << tracker.log();
  // a fetched the manifest shards of its new data shard and trained on them.
  EXPECT_THAT(a.log(), HasSubstr("the tracker gave this peer data shard 2 of 3")) << a.log();
  for (const std::string& name : new_shards) EXPECT_THAT(a.log(), HasSubstr(name + " checked"));
  EXPECT_THAT(a.log(), HasSubstr("data shard 2 of 3: training on")) << a.log();
}

}  // namespace
}  // namespace loco
