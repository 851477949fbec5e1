// The real loco-tracker and loco-peer processes: the peer reaches the tracker over TCP and
// verifies the tracker's pinned key and the run id; a wrong key, another run or a bad address
// fail with a message that says so. A list of replicas' addresses is checked one by one, the
// followers played by ports nothing listens on (a follower replica does not listen); and a peer
// given such a list before any of them listens waits for the one that will.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "../support/etcd_cluster.hpp"
#include "../support/peer_process.hpp"
#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

struct RunResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

RunResult run(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

using test::program;

class TrackerCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    secure::write_key_file(dir_ / "tracker.key", tracker_key_, false);
    secure::write_key_file(dir_ / "peer.key", secure::KeyPair::generate(), false);
    tracker_ = std::make_unique<test::TrackerProcess>(dir_.path(), "run-a");
    ASSERT_TRUE(tracker_->started()) << tracker_->log();
    address_ = tracker_->address();
    EXPECT_EQ(tracker_->public_key(), secure::to_hex(tracker_key_.public_key()));
  }

  RunResult check(const std::string& pinned_hex, const std::string& run_id,
                  const std::string& address) {
    return run(program("loco-peer") + " check-tracker --peer.key " + (dir_ / "peer.key").string() +
               " --run.id " + run_id + " --tracker.address " + address + " --tracker.public-key " +
               pinned_hex);
  }

  test::TempDir dir_;
  secure::KeyPair tracker_key_ = secure::KeyPair::generate();
  std::unique_ptr<test::TrackerProcess> tracker_;
  std::string address_;
};

TEST_F(TrackerCheck, PeerVerifiesThePinnedTrackerKey) {
  const RunResult ok = check(secure::to_hex(tracker_key_.public_key()), "run-a", address_);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("pinned identity verified for run run-a"), std::string::npos)
      << ok.output;
  EXPECT_EQ(tracker_->process().stop(SIGTERM), 0) << "the tracker stops cleanly on SIGTERM";
}

TEST_F(TrackerCheck, ATrackerWithAnotherKeyIsRefused) {
  const auto impostor = secure::to_hex(secure::KeyPair::generate().public_key());
  const RunResult refused = check(impostor, "run-a", address_);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("is not accepted here (not the pinned key"), std::string::npos)
      << refused.output;
}

TEST_F(TrackerCheck, AnotherRunOrABadAddressFails) {
  const auto pinned = secure::to_hex(tracker_key_.public_key());
  const RunResult other_run = check(pinned, "run-b", address_);
  EXPECT_EQ(other_run.exit_code, 1) << other_run.output;
  const RunResult no_port = check(pinned, "run-a", "127.0.0.1");
  EXPECT_EQ(no_port.exit_code, 1);
  EXPECT_NE(no_port.output.find("--tracker.address: \"127.0.0.1\": no port"), std::string::npos)
      << no_port.output;
  const RunResult bad_key = check("abcd", "run-a", address_);
  EXPECT_EQ(bad_key.exit_code, 1);
  EXPECT_NE(bad_key.output.find("--tracker.public-key"), std::string::npos) << bad_key.output;
}

TEST_F(TrackerCheck, AListOfReplicasNamesTheOneThatLeads) {
  const auto pinned = secure::to_hex(tracker_key_.public_key());
  const std::string follower_a = "127.0.0.1:" + std::to_string(test::free_loopback_port());
  const std::string follower_b = "127.0.0.1:" + std::to_string(test::free_loopback_port());
  const RunResult ok = check(pinned, "run-a", follower_a + "," + address_ + "," + follower_b);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("at " + address_ + ": pinned identity verified for run run-a"),
            std::string::npos)
      << ok.output;
  EXPECT_EQ(test::occurrences(ok.output, "): it leads"), 1u) << ok.output;
  EXPECT_NE(ok.output.find("no answer at " + follower_a), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("no answer at " + follower_b), std::string::npos) << ok.output;
  EXPECT_EQ(test::occurrences(ok.output, "expected of a follower replica, which does not listen"),
            2u)
      << ok.output;
  EXPECT_NE(ok.output.find("3 replicas: " + address_ + " leads"), std::string::npos) << ok.output;
}

TEST_F(TrackerCheck, AListWithNoLeaderTwoOrAnImpostorFails) {
  const auto pinned = secure::to_hex(tracker_key_.public_key());
  const std::string follower = "127.0.0.1:" + std::to_string(test::free_loopback_port());
  const RunResult none = check(pinned, "run-a", follower + "," + follower);
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_NE(none.output.find("no replica of the 2 answered"), std::string::npos) << none.output;
  const RunResult two = check(pinned, "run-a", address_ + "," + follower + "," + address_);
  EXPECT_EQ(two.exit_code, 1) << two.output;
  EXPECT_NE(two.output.find("2 replicas answered"), std::string::npos) << two.output;
  const auto impostor = secure::to_hex(secure::KeyPair::generate().public_key());
  const RunResult wrong = check(impostor, "run-a", follower + "," + address_);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("is not accepted here (not the pinned key"), std::string::npos)
      << wrong.output;
  EXPECT_EQ(wrong.output.find("it leads"), std::string::npos) << wrong.output;
}

// Polls `done` every 50 ms for at most 60 s (a hang guard, not a speed assertion).
template <typename Done>
bool poll_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// Issue 47: a peer that has never joined judged its attempts one by one, so with three replicas'
// addresses and no leader yet it gave up after 4 of them (little more than one pass). It now
// counts whole passes, and waits at least 10 s: the leader that starts listening after the peer
// made more attempts than the old bound is joined.
TEST(PeerBeforeALeader, APeerWhoseReplicasDoNotListenYetJoinsTheFirstThatDoes) {
  test::TempDir dir;
  const secure::KeyPair key = secure::KeyPair::generate();
  secure::write_key_file(dir / "tracker.key", key, false);
  const auto loopback = [] { return "127.0.0.1:" + std::to_string(test::free_loopback_port()); };
  const std::string leader = loopback();
  const test::SwarmRun run{.dir = dir.path(),
                           .run_id = "run-before-leader",
                           .config = test::write_swarm_config(dir.path(), 1000),
                           .tracker_address = loopback() + "," + leader + "," + loopback(),
                           .tracker_key = secure::to_hex(key.public_key())};
  test::PeerProcess peer(run, "peer0");
  const auto attempts = [&] { return test::occurrences(peer.log(), "reconnecting to 127.0.0.1:"); };
  const int old_bound = 4;
  ASSERT_TRUE(poll_until([&] { return attempts() > old_bound || !peer.process().running(); }))
      << peer.log();
  ASSERT_TRUE(peer.process().running()) << "gave up before a leader could be elected\n"
                                        << peer.log();
  const test::TrackerProcess tracker(dir.path(), run.run_id, {}, leader, run.config);
  ASSERT_TRUE(tracker.started()) << tracker.log();
  EXPECT_TRUE(poll_until([&] { return peer.log().find("joined run ") != std::string::npos; }))
      << peer.log();
  EXPECT_EQ(peer.log().find("no connection to the tracker"), std::string::npos) << peer.log();
}

}  // namespace
}  // namespace loco
