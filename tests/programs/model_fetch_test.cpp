// Issue 44, the model for everyone: the final model can be fetched from the peers that hold it
// (`loco-peer fetch-model`), checked against the hash the run committed, so that it does not hang
// on the tracker's uplink. Real processes on loopback: a one-peer run of two rounds ends; its peer
// stays to serve the final state (--peer.seed-after-end). Every fetched file must be the file
// `loco-tracker export` writes, byte for byte.
//   1. Only the peer holds the state (beside the tracker's custody copy): fetched from the peer.
//   2. A member that lies about the bytes (loco-member-attacker false-donor: the true manifest,
//      chunks of zeros) holds it too, and is the one the tracker names first (it has served no
//      one; one donor a resync): its first chunk fails the manifest, it is reported, and the fetch
//      goes on from the next holders named.
//   3. The peer leaves: the liar is the only member that claims the state, and the tracker adds
//      its own copy once the liar's fetch failed.
// And the errors a fetch can end with: no holder, another run, no tracker.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../support/member_attacks.hpp"
#include "loco/core/hash.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

using test::LocalSwarm;
using test::PeerProcess;

constexpr std::uint64_t kFetchRounds = 2;
constexpr char kFetchRun[] = "model-fetch";

std::string key_id(const std::filesystem::path& key_file) {
  return secure::short_id(secure::read_key_file(key_file, secure::KeyOwner::peer).public_key());
}

struct FetchOutcome {
  int exit_code = -1;
  std::string line;  // its one line on stdout
  std::string log;
  std::string file;  // the bytes written
};

// `loco-peer fetch-model` for the run of `swarm` (`run_id` and `extra` options replacing the
// test's), writing `name`.safetensors.
FetchOutcome run_fetch_model(LocalSwarm& swarm, const std::string& name,
                             const std::string& run_id = kFetchRun,
                             const std::vector<std::string>& extra = {}) {
  const auto out = swarm.dir() / (name + ".safetensors");
  const auto log = swarm.dir() / (name + ".log");
  std::vector<std::string> argv = {test::program("loco-peer"),
                                   "fetch-model",
                                   "--out",
                                   out.string(),
                                   "--run.id",
                                   run_id,
                                   "--run.config",
                                   (swarm.dir() / "swarm.toml").string(),
                                   "--tracker.address",
                                   swarm.tracker().address(),
                                   "--tracker.public-key",
                                   swarm.tracker().public_key(),
                                   "--peer.listen",
                                   "127.0.0.1:0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  test::ChildProcess fetcher(argv, log);
  FetchOutcome f;
  f.line = fetcher.read_line(test::kLinePatienceMs);
  f.exit_code = fetcher.wait();
  f.log = test::read_text(log);
  if (std::filesystem::exists(out)) f.file = test::read_text(out);
  return f;
}

// The file `loco-tracker export` writes of the newest custody copy.
std::string tracker_export(LocalSwarm& swarm) {
  const auto out = swarm.dir() / "export.safetensors";
  test::ChildProcess exporter(
      {test::program("loco-tracker"), "export", "--out", out.string(), "--run.id", kFetchRun,
       "--run.config", (swarm.dir() / "swarm.toml").string(), "--tracker.state-file",
       (swarm.dir() / "tracker.state").string()},
      swarm.dir() / "export.log");
  exporter.read_line(test::kLinePatienceMs);
  EXPECT_EQ(exporter.wait(), 0) << test::read_text(swarm.dir() / "export.log");
  return test::read_text(out);
}

// Whether the tracker's log says `text` within 10 s: a line about a message it reads after the
// test's last awaited event (a report, a probe's result).
bool tracker_logs(LocalSwarm& swarm, const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    if (swarm.tracker().log().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// The hex BLAKE2b-256 of `bytes`, as fetch-model prints it.
std::string file_hash(const std::string& bytes) {
  return to_hex(blake2b(std::as_bytes(std::span(bytes.data(), bytes.size()))));
}

TEST(ModelFetch, PeersHandOutTheFinalModelAndALyingHolderIsSkipped) {
  LocalSwarm swarm(kFetchRun, kFetchRounds, {"--run.donors", "1"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& seeder = swarm.add_peer("seeder", {"--peer.seed-after-end", "5min"});
  const std::string over = seeder.wait_for("run over: ");
  ASSERT_TRUE(over.ends_with("kept by the tracker")) << over << "\n" << swarm.logs();
  ASSERT_TRUE(seeder.wait_for("seeding: final round 2, state ").starts_with("seeding"))
      << swarm.logs();
  const std::string model = tracker_export(swarm);
  ASSERT_FALSE(model.empty());
  const std::string seeder_id = key_id(swarm.dir() / "seeder.key");
  const std::string expected = "fetched round 2 of run model-fetch (its final round) from ";

  // 1. From the peer that holds it.
  const FetchOutcome first = run_fetch_model(swarm, "first");
  ASSERT_EQ(first.exit_code, 0) << first.log << swarm.logs();
  EXPECT_EQ(first.line.rfind(expected + "peer " + seeder_id + ": state ", 0), 0u) << first.line;
  EXPECT_TRUE(first.file == model) << first.file.size() << " bytes fetched";
  EXPECT_NE(first.line.find("(BLAKE2b-256 " + file_hash(model) + ")"), std::string::npos)
      << first.line;

  // 2. A liar holds it too, and is named first.
  test::Attacker liar(swarm, kFetchRun, "false-donor", {}, "liar");
  const std::string liar_id = key_id(swarm.dir() / "liar.key");
  ASSERT_TRUE(liar.wait_for("holds a false copy of 2 ").starts_with("holds")) << liar.log();
  // Named only once the tracker's probe found it reachable.
  ASSERT_TRUE(tracker_logs(swarm, "peer " + liar_id + ": reachable at")) << swarm.logs();
  const FetchOutcome second = run_fetch_model(swarm, "second");
  ASSERT_EQ(second.exit_code, 0) << second.log << swarm.logs();
  EXPECT_EQ(second.line.rfind(expected, 0), 0u) << second.line;
  EXPECT_EQ(second.line.find(liar_id), std::string::npos) << second.line;
  EXPECT_TRUE(second.file == model) << second.file.size() << " bytes fetched";
  EXPECT_TRUE(liar.wait_for("served a false chunk to ").starts_with("served")) << liar.lines();
  EXPECT_TRUE(tracker_logs(swarm, "reported " + liar_id)) << swarm.logs();

  // 3. The peer leaves: the liar and the tracker's copy are left.
  EXPECT_EQ(seeder.process().stop(SIGTERM), 0) << swarm.logs();
  const FetchOutcome third = run_fetch_model(swarm, "third");
  ASSERT_EQ(third.exit_code, 0) << third.log << swarm.logs();
  EXPECT_EQ(third.line.rfind(expected + "the tracker's custody copy: state ", 0), 0u) << third.line;
  EXPECT_TRUE(third.file == model) << third.file.size() << " bytes fetched";
  EXPECT_EQ(liar.process().stop(SIGTERM), 0);
}

TEST(ModelFetch, SaysWhyItCannot) {
  // Custody off, and the run's one peer leaves at the end: nobody holds the final state.
  LocalSwarm swarm(kFetchRun, kFetchRounds, {"--tracker.custody-every", "0"});
  ASSERT_TRUE(swarm.tracker().started()) << swarm.logs();
  PeerProcess& peer = swarm.add_peer("peer0");
  EXPECT_TRUE(peer.wait_for("run over: ").ends_with("not kept by the tracker")) << swarm.logs();
  EXPECT_EQ(peer.process().wait(), 0) << swarm.logs();

  const FetchOutcome nobody = run_fetch_model(swarm, "nobody");
  EXPECT_EQ(nobody.exit_code, 1);
  EXPECT_NE(nobody.log.find("the run ended at round 2 and no live peer holds its final state, "
                            "nor does the tracker"),
            std::string::npos)
      << nobody.log;
  EXPECT_TRUE(nobody.file.empty());

  const FetchOutcome other_run = run_fetch_model(swarm, "other-run", "another-run");
  EXPECT_EQ(other_run.exit_code, 1);
  EXPECT_NE(other_run.log.find("check [run] id \"another-run\""), std::string::npos)
      << other_run.log;

  EXPECT_EQ(swarm.tracker().process().stop(SIGTERM), 0);
  const FetchOutcome no_tracker = run_fetch_model(swarm, "no-tracker");
  EXPECT_EQ(no_tracker.exit_code, 1);
  EXPECT_NE(no_tracker.log.find("no connection to the tracker"), std::string::npos)
      << no_tracker.log;
}

}  // namespace
}  // namespace loco
