// A real loco-tracker and real peer processes (loco-test-peer: the whole tracker protocol over
// the network stack, with a hash chain standing in for training) on loopback: joining,
// heartbeats, rounds, leaving, a killed and a frozen peer, and a tracker killed and restarted in
// the middle of the run. Every wait is on a line a process prints, with a generous hang guard.

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <string>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"

namespace loco {
namespace {

using test::program;

class TestPeer {
 public:
  TestPeer(const std::filesystem::path& dir, int n, const test::TrackerProcess& tracker,
           const std::string& run_id, const std::string& address)
      : name_("peer" + std::to_string(n)) {
    const auto key = dir / (name_ + ".key");
    if (!std::filesystem::exists(key))
      secure::write_key_file(key, secure::KeyPair::generate(), false);
    process_ = std::make_unique<test::ChildProcess>(
        std::vector<std::string>{program("loco-test-peer"), "--key", key.string(), "--tracker",
                                 address, "--tracker-key", tracker.public_key(), "--run-id", run_id,
                                 "--run-config", test::run_config(), "--train-ms", "50"},
        dir / (name_ + ".log"));
  }

  // Reads lines until one starts with `prefix`; returns it ("" if the guard ran out). Every
  // "committed R H" line on the way is recorded.
  std::string wait_for(const std::string& prefix) {
    for (;;) {
      const std::string line = process_->read_line(test::kLinePatienceMs);
      if (line.empty()) return "";
      if (line.starts_with("committed ") || line.starts_with("resynced ")) record_state(line);
      if (line.starts_with(prefix)) return line;
    }
  }
  // Waits until this peer has committed round `round` or a later one.
  bool wait_round(std::uint64_t round) {
    while (committed_.empty() || committed_.rbegin()->first < round)
      if (wait_for("committed ").empty()) return false;
    return true;
  }

  const std::map<std::uint64_t, std::string>& committed() const { return committed_; }
  std::vector<std::uint64_t> commit_order() const { return order_; }
  test::ChildProcess& process() { return *process_; }

 private:
  // "committed R H" or "resynced R H": the peer now holds the state of round R.
  void record_state(const std::string& line) {
    const auto first = line.find(' ') + 1;
    const auto second = line.find(' ', first);
    const std::uint64_t round = std::stoull(line.substr(first, second - first));
    committed_[round] = line.substr(second + 1);
    order_.push_back(round);
  }

  std::string name_;
  std::unique_ptr<test::ChildProcess> process_;
  std::map<std::uint64_t, std::string> committed_;  // round -> state hash prefix
  std::vector<std::uint64_t> order_;
};

// Options that make evictions come quickly enough for a test.
const std::vector<std::string> kFastTimers = {"--run.heartbeat-interval", "200ms",
                                              "--run.eviction-timeout",   "2s",
                                              "--run.join-timeout",       "2s"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(TrackerRun, PeersJoinCommitTheSameRoundsAndLeave) {
  test::TempDir dir;
  test::TrackerProcess tracker(dir.path(), "run-j", with(kFastTimers, {"--run.min-peers", "2"}));
  ASSERT_TRUE(tracker.started()) << tracker.log();
  TestPeer a(dir.path(), 1, tracker, "run-j", tracker.address());
  TestPeer b(dir.path(), 2, tracker, "run-j", tracker.address());
  EXPECT_TRUE(a.wait_for("joined shard ").starts_with("joined shard "));
  EXPECT_TRUE(b.wait_for("joined shard ").starts_with("joined shard "));
  ASSERT_TRUE(a.wait_round(5)) << tracker.log();
  ASSERT_TRUE(b.wait_round(5)) << tracker.log();
  for (std::uint64_t r = 1; r <= 5; ++r) {
    ASSERT_TRUE(a.committed().contains(r) && b.committed().contains(r)) << "round " << r;
    EXPECT_EQ(a.committed().at(r), b.committed().at(r)) << "round " << r;
  }
  EXPECT_EQ(a.process().stop(SIGTERM), 0);
  EXPECT_NE(tracker.log().find("left: stopped by a signal"), std::string::npos) << tracker.log();
}

TEST(TrackerRun, AKilledPeerIsDroppedAndAFrozenPeerIsEvicted) {
  test::TempDir dir;
  test::TrackerProcess tracker(dir.path(), "run-k", kFastTimers);
  ASSERT_TRUE(tracker.started()) << tracker.log();
  TestPeer a(dir.path(), 1, tracker, "run-k", tracker.address());
  TestPeer b(dir.path(), 2, tracker, "run-k", tracker.address());
  TestPeer c(dir.path(), 3, tracker, "run-k", tracker.address());
  for (TestPeer* p : {&a, &b, &c}) ASSERT_FALSE(p->wait_for("group ").empty()) << tracker.log();
  c.process().stop(SIGKILL);  // the kernel closes its socket: a lost connection
  // Within a few rounds the others run in groups of two.
  ASSERT_EQ(a.wait_for("group ").empty(), false);
  std::string line;
  for (int i = 0; i < 50 && !line.ends_with(" 2"); ++i) line = a.wait_for("group ");
  EXPECT_TRUE(line.ends_with(" 2")) << line << "\n" << tracker.log();
  EXPECT_NE(tracker.log().find("connection lost"), std::string::npos) << tracker.log();

  ::kill(b.process().pid(), SIGSTOP);  // frozen: the connection stays up, the heartbeats stop
  for (int i = 0; i < 200 && tracker.log().find("evicted: silent for 2 s") == std::string::npos;
       ++i)
    a.wait_for("group ");
  EXPECT_NE(tracker.log().find("evicted: silent for 2 s"), std::string::npos) << tracker.log();
  for (int i = 0; i < 50 && !line.ends_with(" 1"); ++i) line = a.wait_for("group ");
  EXPECT_TRUE(line.ends_with(" 1")) << "peer 1 goes on alone: " << line;
  ::kill(b.process().pid(), SIGCONT);
}

TEST(TrackerRun, ARestartedTrackerContinuesTheRunWithTheNextRound) {
  test::TempDir dir;
  auto tracker = std::make_unique<test::TrackerProcess>(dir.path(), "run-r", kFastTimers);
  ASSERT_TRUE(tracker->started()) << tracker->log();
  const std::string address = tracker->address();
  TestPeer a(dir.path(), 1, *tracker, "run-r", address);
  TestPeer b(dir.path(), 2, *tracker, "run-r", address);
  ASSERT_TRUE(a.wait_round(4)) << tracker->log();
  tracker->process().stop(SIGKILL);
  const std::uint64_t before = a.committed().rbegin()->first;
  // The same key, state file and address: the run's tracker, back.
  tracker = std::make_unique<test::TrackerProcess>(dir.path(), "run-r", kFastTimers, address);
  ASSERT_TRUE(tracker->started()) << tracker->log();
  EXPECT_NE(tracker->log().find("continuing run run-r"), std::string::npos) << tracker->log();
  ASSERT_TRUE(a.wait_round(before + 3)) << tracker->log();
  ASSERT_TRUE(b.wait_round(before + 3)) << tracker->log();
  // No round applied twice (each peer's rounds only go up), and both peers hold the same states.
  for (const TestPeer* p : {&a, &b}) {
    const auto order = p->commit_order();
    for (std::size_t i = 1; i < order.size(); ++i)
      EXPECT_GT(order[i], order[i - 1]) << "state change " << i;
  }
  for (const auto& [round, hash] : a.committed()) {
    if (b.committed().contains(round)) {
      EXPECT_EQ(b.committed().at(round), hash) << round;
    }
  }
}

}  // namespace
}  // namespace loco
