// Peers serve a dataset's train shards to peers (issue 46; host/peer_shards.hpp), over the mesh's
// authenticated links: a peer with an empty data folder whose HTTP sources lack the train shards
// gets its own from a member that holds them, every byte checked against the manifest; and a
// member that serves corrupted bytes is named, skipped and not asked again, the shard fetched from
// the next source; and a member past its upload cap for serving refuses as busy, is not blamed for
// it, and is asked again for the next shard. Peer a holds the whole dataset in its cache (it
// trained on it before); b's folder is empty. Both list one mirror.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
using ::testing::Not;

// A run of 2 data shards over the dataset, whose peers' mirror (a python3 HTTP server) serves the
// organiser's folder, or a copy without its train shards.
struct PeersRun {
  static constexpr std::uint64_t kRounds = 6;
  test::TempDir dir;
  test::PreparedDataset prepared = test::prepare_english_dataset(dir.path());
  std::vector<std::string> b_shards = test::shards_of(prepared.folder, 1, 2);
  std::unique_ptr<test::Mirror> mirror;
  std::unique_ptr<test::TrackerProcess> tracker;
  test::SwarmRun run;

  PeersRun(const std::string& run_id, bool mirror_has_train_shards) {
    const fs::path served = dir / "mirror";
    fs::create_directories(served);
    for (const fs::directory_entry& e : fs::directory_iterator(prepared.folder))
      if (mirror_has_train_shards || !e.path().filename().string().starts_with("train-"))
        fs::copy_file(e.path(), served / e.path().filename());
    mirror = std::make_unique<test::Mirror>(test::python_mirror_argv(served), dir / "mirror.log");
    std::vector<std::string> options = test::kSwarmTimers;
    options.insert(options.end(), {"--run.min-peers", "2", "--run.shard-count", "2"});
    tracker = std::make_unique<test::TrackerProcess>(
        dir.path(), run_id, options, "127.0.0.1:0",
        test::write_dataset_run_config(dir / "run.toml", prepared.hash, "", kRounds));
    run = {.dir = dir.path(),
           .run_id = run_id,
           .config = test::write_dataset_run_config(
               dir / "peer.toml", prepared.hash, "mirrors = [\"" + mirror->url + "\"]\n", kRounds),
           .tracker_address = tracker->address(),
           .tracker_key = tracker->public_key()};
  }
  bool ready() const {
    return !prepared.hash.empty() && !b_shards.empty() && !mirror->url.empty() &&
           tracker->started();
  }

  // Peer `name`'s options; `holds`: its data cache holds the whole dataset already.
  std::vector<std::string> peer_options(const std::string& name, bool holds) const {
    const fs::path cache = dir / ("cache-" + name);
    if (holds) {
      const fs::path folder = cache / prepared.hash.substr(0, 16);
      fs::create_directories(folder);
      for (const fs::directory_entry& e : fs::directory_iterator(prepared.folder))
        fs::copy_file(e.path(), folder / e.path().filename());
    }
    return {"--peer.data-cache", cache.string(), "--debug.step-delay", "50"};
  }
  // "peer 1a2b3c4d" of peer `name` (its key file, which PeerProcess made).
  std::string id_of(const std::string& name) const {
    return "peer " +
           secure::short_id(
               secure::read_key_file(dir / (name + ".key"), secure::KeyOwner::peer).public_key());
  }
};

// Both peers train the run to its end.
void expect_both_end(PeerProcess& a, PeerProcess& b) {
  for (PeerProcess* p : {&a, &b}) {
    const std::optional<test::PeerEnd> end = p->wait_end();
    ASSERT_TRUE(end) << p->log();
    EXPECT_EQ(end->round, PeersRun::kRounds) << p->log();
    EXPECT_EQ(p->process().wait(), 0) << p->log();
  }
}

TEST(DatasetPeers, APeerWhoseSourcesLackItsShardGetsItFromAPeerThatHoldsIt) {
  PeersRun r("run-peer-shards", /*mirror_has_train_shards=*/false);
  ASSERT_TRUE(r.ready()) << r.tracker->log();
  PeerProcess a(r.run, "a", r.peer_options("a", true));
  ASSERT_TRUE(test::tracker_logged(*r.tracker, "(shard 0,")) << r.tracker->log();  // a has shard 0
  PeerProcess b(r.run, "b", r.peer_options("b", false));
  expect_both_end(a, b);
  const std::string from_a = "from " + r.id_of("a") + ")";
  for (const std::string& name : r.b_shards)
    EXPECT_THAT(b.log(), HasSubstr(name + " checked")) << b.log();
  EXPECT_THAT(b.log(), HasSubstr(from_a)) << b.log();
  EXPECT_THAT(b.log(), HasSubstr("data shard 1 of 2: training on")) << b.log();
  EXPECT_THAT(b.log(), Not(HasSubstr("fails its BLAKE2b"))) << b.log();
}

TEST(DatasetPeers, APeerServingCorruptedShardsIsNamedSkippedAndNotAskedAgain) {
  PeersRun r("run-peer-liar", /*mirror_has_train_shards=*/true);
  ASSERT_TRUE(r.ready()) << r.tracker->log();
  std::vector<std::string> liar = r.peer_options("a", true);
  liar.push_back("--debug.corrupt-shards");
  PeerProcess a(r.run, "a", liar);
  ASSERT_TRUE(test::tracker_logged(*r.tracker, "(shard 0,")) << r.tracker->log();
  PeerProcess b(r.run, "b", r.peer_options("b", false));
  expect_both_end(a, b);
  const std::string a_id = r.id_of("a");
  // Asked first, a's bytes fail the first shard's hash: named, skipped; the mirror's copy is
  // checked instead, and a is not asked for the others.
  EXPECT_THAT(b.log(), HasSubstr("source " + a_id + " skipped for " + r.b_shards.front() +
                                 ": the file fails its BLAKE2b check"))
      << b.log();
  for (const std::string& name : r.b_shards)
    EXPECT_THAT(b.log(), HasSubstr(name + " checked (")) << b.log();
  EXPECT_THAT(b.log(), Not(HasSubstr("from " + a_id + ")"))) << b.log();
  EXPECT_EQ(test::occurrences(b.log(), "source " + a_id + " skipped"), 1u) << b.log();
}

// a serves at 1 kbit (125 B/s): its first shard of 8 KiB goes at once, and the next would wait
// more than a minute, so every later request is refused as busy and b fetches from the mirror;
// a is asked again for each shard (a busy peer is not blamed), and never skipped.
TEST(DatasetPeers, APeerPastItsUploadCapRefusesAsBusyAndIsAskedAgainForTheNextShard) {
  PeersRun r("run-peer-busy", /*mirror_has_train_shards=*/true);
  ASSERT_TRUE(r.ready()) << r.tracker->log();
  ASSERT_GE(r.b_shards.size(), 4u);  // a first shard before the view, one from a, two busy
  std::vector<std::string> capped = r.peer_options("a", true);
  capped.insert(capped.end(), {"--peer.data-serve-rate", "1kbit"});
  PeerProcess a(r.run, "a", capped);
  ASSERT_TRUE(test::tracker_logged(*r.tracker, "(shard 0,")) << r.tracker->log();
  PeerProcess b(r.run, "b", r.peer_options("b", false));
  expect_both_end(a, b);
  const std::string a_id = r.id_of("a");
  for (const std::string& name : r.b_shards)
    EXPECT_THAT(b.log(), HasSubstr(name + " checked (")) << b.log();
  EXPECT_EQ(test::occurrences(b.log(), "from " + a_id + ")"), 1u) << b.log();
  EXPECT_GE(
      test::occurrences(b.log(), "refused: busy: this peer's upload cap for serving (125 B/s)"), 2u)
      << b.log();
  EXPECT_THAT(b.log(), Not(HasSubstr("source " + a_id + " skipped"))) << b.log();
}

}  // namespace
}  // namespace loco
