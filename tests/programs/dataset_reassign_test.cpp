// A peer whose data shard changes after it joined (issue 46) fetches the new shard's manifest
// shards and trains on them. The tracker gives a shard at each join: peer a, frozen (SIGSTOP, by
// --debug.stop-at) long enough to be evicted, loses its shard to newcomer c; thawed, it joins
// again and is given the one shard still free, 2 of 3. All three peers start with empty data
// folders and fetch from the tracker's HTTP server (--tracker.dataset).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "../support/dataset_runs.hpp"
#include "../support/local_swarm.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

namespace fs = std::filesystem;
using test::PeerProcess;
using ::testing::HasSubstr;

// A run of 3 data shards whose peers start with empty data folders and fetch from the tracker's
// HTTP server; a member silent for 2 s is evicted and its shard freed.
struct ReassignRun {
  static constexpr std::uint64_t kRounds = 12;
  test::TempDir dir;
  test::PreparedDataset prepared = test::prepare_english_dataset(dir.path());
  std::vector<std::string> new_shards = test::shards_of(prepared.folder, 2, 3);
  std::unique_ptr<test::TrackerProcess> tracker;
  test::SwarmRun run;

  explicit ReassignRun(const std::string& run_id, std::uint64_t rounds = kRounds) {
    std::vector<std::string> tracker_options = test::kSwarmTimers;
    tracker_options.insert(tracker_options.end(), {"--run.min-peers", "2", "--run.shard-count", "3",
                                                   "--run.eviction-timeout", "2s",
                                                   "--tracker.dataset", prepared.folder.string()});
    const std::string tracker_config =
        test::write_dataset_run_config(dir / "run.toml", prepared.hash, "", rounds);
    tracker = std::make_unique<test::TrackerProcess>(dir.path(), run_id, tracker_options,
                                                     "127.0.0.1:0", tracker_config);
    const std::string config = test::write_dataset_run_config(
        dir / "peer.toml", prepared.hash,
        "mirrors = [\"http://" + tracker->http_address() + "/dataset/\"]\n", rounds);
    run = {.dir = dir.path(),
           .run_id = run_id,
           .config = config,
           .tracker_address = tracker->address(),
           .tracker_key = tracker->public_key()};
  }
  bool ready() const { return !prepared.hash.empty() && !new_shards.empty() && tracker->started(); }
  std::vector<std::string> peer_options(const std::string& name) const {
    return {"--peer.data-cache", (dir / ("cache-" + name)).string(), "--debug.step-delay", "100"};
  }
};

TEST(DatasetReassign, APeerGivenAnotherShardWhenItJoinsAgainFetchesAndTrainsOnIt) {
  ReassignRun r("run-reassign");
  ASSERT_TRUE(r.ready()) << r.tracker->log();
  const test::TrackerProcess& tracker = *r.tracker;
  std::vector<std::string> a_options = r.peer_options("a");
  a_options.insert(a_options.end(), {"--debug.stop-at", "mean:2"});
  PeerProcess a(r.run, "a", a_options);
  PeerProcess b(r.run, "b", r.peer_options("b"));
  // a stops itself once round 2's mean is in; silent for 2 s, it is evicted and its shard freed.
  ASSERT_TRUE(test::tracker_logged(tracker, "evicted: silent", 1)) << tracker.log() << a.log();
  PeerProcess c(r.run, "c", r.peer_options("c"));
  ASSERT_TRUE(test::tracker_logged(tracker, "(shard ", 3)) << tracker.log();  // c has a's shard
  ASSERT_EQ(::kill(a.process().pid(), SIGCONT), 0);

  for (PeerProcess* p : {&a, &b, &c}) {
    const std::optional<test::PeerEnd> end = p->wait_end();
    ASSERT_TRUE(end) << p->log();
    EXPECT_EQ(end->round, ReassignRun::kRounds) << p->log();
    EXPECT_EQ(p->process().wait(), 0) << p->log();
  }
  EXPECT_THAT(tracker.log(), HasSubstr("(shard 2,")) << tracker.log();
  // a fetched the manifest shards of its new data shard and trained on them.
  EXPECT_THAT(a.log(), HasSubstr("the tracker gave this peer data shard 2 of 3")) << a.log();
  for (const std::string& name : r.new_shards) EXPECT_THAT(a.log(), HasSubstr(name + " checked"));
  EXPECT_THAT(a.log(), HasSubstr("data shard 2 of 3: training on")) << a.log();
}

// "files I: NAME NAME ..." as tests/capi/data_follower.c prints it.
std::string files_line(std::uint32_t index, const std::vector<std::string>& names) {
  std::string line = "files " + std::to_string(index) + ":";
  for (const std::string& name : names) line += " " + name;
  return line;
}

// The same for a trainer peer (the C API, tests/capi/data_follower.c): frozen (SIGSTOP) after it
// got its first shard's files, evicted, its shard taken by a newcomer; thawed, it joins again, is
// given shard 2, sees the change with loco_peer_data_shard after a round and gets the new shard's
// files, fetched and checked, from loco_peer_data_files.
TEST(DatasetReassign, ATrainerPeerSeesItsShardChangeAndGetsTheNewShardsFiles) {
  ReassignRun r("run-follow", 60);  // b and c train on while the trainer comes back
  ASSERT_TRUE(r.ready()) << r.tracker->log();
  const test::TrackerProcess& tracker = *r.tracker;
  const fs::path key = r.dir / "trainer.key";
  secure::write_key_file(key, secure::KeyPair::generate(), false);
  const fs::path peer_config = r.dir / "trainer.toml";
  std::ofstream(peer_config) << "log-level = \"info\"\n[peer]\nkey = \"" << key.string()
                             << "\"\nlisten = \"127.0.0.1:0\"\ndata-cache = \""
                             << (r.dir / "cache-trainer").string() << "\"\n[run]\nid = \""
                             << r.run.run_id << "\"\nconfig = \"" << r.run.config
                             << "\"\n[tracker]\naddress = \"" << r.run.tracker_address
                             << "\"\npublic-key = \"" << r.run.tracker_key << "\"\n";
  const fs::path trainer_log = r.dir / "trainer.log";
  test::ChildProcess trainer(
      {test::program("loco_test_capi_data_follower"), peer_config.string(), "400"}, trainer_log);
  const auto log = [&] { return test::read_text(trainer_log); };
  ASSERT_EQ(trainer.read_line(test::kLinePatienceMs), "joined shard 0 of 3") << log();
  ASSERT_EQ(trainer.read_line(test::kLinePatienceMs),
            files_line(0, test::shards_of(r.prepared.folder, 0, 3)))
      << log();
  ASSERT_EQ(::kill(trainer.pid(), SIGSTOP), 0);
  PeerProcess b(r.run, "b", r.peer_options("b"));
  ASSERT_TRUE(test::tracker_logged(tracker, "evicted: silent", 1)) << tracker.log();
  PeerProcess c(r.run, "c", r.peer_options("c"));
  ASSERT_TRUE(test::tracker_logged(tracker, "(shard ", 3)) << tracker.log();  // c has shard 0
  ASSERT_EQ(::kill(trainer.pid(), SIGCONT), 0);

  EXPECT_EQ(trainer.read_line(test::kLinePatienceMs), "shard 2 of 3 after 1 change(s)") << log();
  EXPECT_EQ(trainer.read_line(test::kLinePatienceMs), files_line(2, r.new_shards)) << log();
  EXPECT_EQ(trainer.wait(), 0) << log();
  EXPECT_THAT(log(), HasSubstr("the tracker gave this peer data shard 2 of 3")) << log();
  for (const std::string& name : r.new_shards) EXPECT_THAT(log(), HasSubstr(name + " checked"));
}

}  // namespace
}  // namespace loco
