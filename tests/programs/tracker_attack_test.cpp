// Attacks on a real loco-tracker process by a peer with a valid key and the run id, as anyone can
// have: frames sealed by hand that no honest channel sends. The tracker must refuse them, stay up,
// and keep serving an honest peer.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "../support/tracker_attacker.hpp"
#include "../support/tracker_process.hpp"
#include "loco/net/stripe_layout.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

namespace asio = boost::asio;
using Bytes = std::vector<std::byte>;

using test::program;

using test::kJoinRequestType;

class TrackerUnderAttack : public ::testing::Test {
 protected:
  void SetUp() override {
    secure::write_key_file(dir_ / "peer.key", secure::KeyPair::generate(), false);
    tracker_ = std::make_unique<test::TrackerProcess>(dir_.path(), "run-a");
    ASSERT_TRUE(tracker_->started()) << tracker_->log();
    port_ = tracker_->port();
  }

  // The tracker process is still running and an honest peer still gets through.
  void expect_tracker_serves() {
    EXPECT_TRUE(tracker_->process().running()) << log();
    const std::string command =
        program("loco-peer") + " check-tracker --peer.key " + (dir_ / "peer.key").string() +
        " --run.id run-a --tracker.address 127.0.0.1:" + port_ + " --tracker.public-key " +
        tracker_->public_key() + " > /dev/null 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << log();
  }

  std::string log() const { return tracker_->log(); }

  // The first chunk of a 4,096-byte stripe message (its 8-byte stripe header, then payload).
  static Bytes first_chunk() {
    Bytes chunk(100, std::byte{0x41});
    const auto header = net::encode_stripe_header(4096 - net::kStripeHeaderBytes);
    std::copy(header.begin(), header.end(), chunk.begin());
    return chunk;
  }

  asio::io_context io_;
  test::TempDir dir_;
  std::unique_ptr<test::TrackerProcess> tracker_;
  std::string port_;
};

TEST_F(TrackerUnderAttack, AChunkThatGrowsItsMessageIsRefusedAndTheTrackerStaysUp) {
  // Two frames used to kill the tracker: the second chunk grows the message to 1 MiB, and the
  // stripe assembler behind the channel hit an assertion (abort, in Release too).
  test::TrackerAttacker attacker(io_, "127.0.0.1", port_, "run-a");
  const Bytes chunk = first_chunk();
  attacker.send(attacker.peer().data(kJoinRequestType, 4096, 0, chunk));
  attacker.send(attacker.peer().data(kJoinRequestType, 1 << 20, chunk.size(), Bytes(100)));
  EXPECT_TRUE(attacker.closed_by_tracker());
  expect_tracker_serves();
  EXPECT_NE(log().find("changed a message's size or type mid-message"), std::string::npos) << log();
}

TEST_F(TrackerUnderAttack, AChunkThatShrinksItsMessageIsRefused) {
  // Shrinking used to make the channel report a complete message after 200 of 4,096 bytes.
  test::TrackerAttacker attacker(io_, "127.0.0.1", port_, "run-a");
  const Bytes chunk = first_chunk();
  attacker.send(attacker.peer().data(kJoinRequestType, 4096, 0, chunk));
  attacker.send(attacker.peer().data(kJoinRequestType, 200, chunk.size(), Bytes(100)));
  EXPECT_TRUE(attacker.closed_by_tracker());
  expect_tracker_serves();
  EXPECT_NE(log().find("changed a message's size or type mid-message"), std::string::npos) << log();
}

TEST(TrackerFull, APeerIsToldTheTrackerIsFull) {
  // A full tracker used to appear to the peer as "Connection reset by peer".
  test::TempDir dir;
  secure::write_key_file(dir / "peer.key", secure::KeyPair::generate(), false);
  test::TrackerProcess tracker(dir.path(), "run-f", {"--tracker.max-connections", "1"});
  ASSERT_TRUE(tracker.started()) << tracker.log();
  asio::io_context io;
  test::TrackerAttacker holder(io, "127.0.0.1", tracker.port(), "run-f");  // the one place
  const std::string output = (dir / "check.out").string();
  const std::string command =
      program("loco-peer") + " check-tracker --peer.key " + (dir / "peer.key").string() +
      " --run.id run-f --tracker.address 127.0.0.1:" + tracker.port() + " --tracker.public-key " +
      tracker.public_key() + " > " + output + " 2>&1";
  EXPECT_NE(std::system(command.c_str()), 0);
  const std::string said = test::read_text(output);
  EXPECT_NE(said.find("refused the connection: it is full (already 1 streams admitted)"),
            std::string::npos)
      << said;
}

}  // namespace
}  // namespace loco
