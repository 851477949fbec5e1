// The real loco-tracker and loco-peer processes: the peer reaches the tracker over TCP and
// verifies the tracker's pinned key and the run id; a wrong key, another run or a bad address
// fail with a message that says so.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

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

}  // namespace
}  // namespace loco
