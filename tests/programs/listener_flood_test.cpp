// Floods against a real loco-tracker process from one address (127.0.0.2: Linux routes all of
// 127/8 to lo), while an honest peer checks in from 127.0.0.1. The tracker must keep its
// per-address bounds, drop connections that never finish their handshake at the deadline, let the
// honest peer in, and summarise the flood in its log instead of writing a line per connection.
// No assertion depends on how fast the machine is: each waits for its condition (a hang guard of
// minutes at most).

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"
#include "loco/secure/identity.hpp"

namespace loco {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using test::program;

// A blocking TCP connection from `source` that never sends a byte.
tcp::socket idle_from(asio::io_context& io, const std::string& source, const std::string& port) {
  tcp::socket socket(io);
  socket.open(tcp::v4());
  socket.bind({asio::ip::make_address(source), 0});
  socket.connect(
      {asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(port))});
  return socket;
}

// True once the other end has closed `socket` (EOF or reset); false if it is still open after
// `limit` (a hang guard).
bool closed_by_tracker(tcp::socket& socket,
                       std::chrono::seconds limit = std::chrono::seconds(120)) {
  timeval timeout{.tv_sec = static_cast<time_t>(limit.count()), .tv_usec = 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char byte = 0;
  for (;;) {
    const ssize_t n = ::recv(socket.native_handle(), &byte, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }
}

class TrackerUnderFlood : public ::testing::Test {
 protected:
  void start(const std::vector<std::string>& extra) {
    secure::write_key_file(dir_ / "peer.key", secure::KeyPair::generate(), false);
    tracker_ = std::make_unique<test::TrackerProcess>(dir_.path(), "run-a", extra);
    ASSERT_TRUE(tracker_->started()) << tracker_->log();
  }

  // An honest peer from 127.0.0.1: `loco-peer check-tracker` exits 0.
  bool honest_peer_gets_in() {
    const std::string command =
        program("loco-peer") + " check-tracker --peer.key " + (dir_ / "peer.key").string() +
        " --run.id run-a --tracker.address 127.0.0.1:" + tracker_->port() +
        " --tracker.public-key " + tracker_->public_key() + " > /dev/null 2>&1";
    return std::system(command.c_str()) == 0;
  }

  // Waits (a hang guard of `limit`) until the tracker's log contains `text`.
  bool log_shows(const std::string& text, std::chrono::seconds limit = std::chrono::seconds(120)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (tracker_->log().find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
  }

  test::TempDir dir_;
  std::unique_ptr<test::TrackerProcess> tracker_;
  asio::io_context io_;
};

TEST_F(TrackerUnderFlood, AnIdleFloodFromOneAddressDoesNotKeepAnHonestPeerOut) {
  // Deadlines far beyond the test: only the per-address cap acts, and the flood's share is held
  // the whole time.
  start({"--tracker.max-per-address", "8", "--tracker.handshake-timeout", "600s",
         "--tracker.bundle-timeout", "600s"});
  std::vector<tcp::socket> flood;
  for (int i = 0; i < 300; ++i) flood.push_back(idle_from(io_, "127.0.0.2", tracker_->port()));
  // Past its share of 8, every connection is closed at once.
  std::size_t closed = 0;
  for (std::size_t i = 8; i < flood.size(); ++i) closed += closed_by_tracker(flood[i]) ? 1 : 0;
  EXPECT_EQ(closed, flood.size() - 8);

  EXPECT_TRUE(honest_peer_gets_in()) << tracker_->log();
  EXPECT_TRUE(tracker_->process().running());
  // One line at the first refusal, then a summary at the end of its 10 s period (two periods if
  // the machine is slow enough to spread the flood over them), not 292 lines.
  ASSERT_TRUE(log_shows("connections from 127.0.0.2 in the last")) << tracker_->log();
  EXPECT_LE(test::occurrences(tracker_->log(), "127.0.0.2"), 12u) << tracker_->log();
}

TEST_F(TrackerUnderFlood, ASlowLorisIsDroppedAtTheHandshakeDeadlineAndFreesItsSlots) {
  // Four connections from one address take every handshake slot and never send a byte.
  start({"--tracker.max-handshakes", "4", "--tracker.max-per-address", "4",
         "--tracker.handshake-timeout", "2s", "--tracker.bundle-timeout", "10s"});
  const auto opened = std::chrono::steady_clock::now();
  std::vector<tcp::socket> loris;
  for (int i = 0; i < 4; ++i) loris.push_back(idle_from(io_, "127.0.0.2", tracker_->port()));
  for (auto& socket : loris) EXPECT_TRUE(closed_by_tracker(socket));
  // A lower bound only: none may be dropped before its deadline.
  EXPECT_GE(std::chrono::steady_clock::now() - opened, std::chrono::seconds(2));
  EXPECT_TRUE(honest_peer_gets_in()) << tracker_->log();
  EXPECT_TRUE(tracker_->process().running());
}

TEST_F(TrackerUnderFlood, AHandshakeTimeoutLongerThanTheBundleTimeoutIsRefused) {
  secure::write_key_file(dir_ / "peer.key", secure::KeyPair::generate(), false);
  tracker_ = std::make_unique<test::TrackerProcess>(
      dir_.path(), "run-a",
      std::vector<std::string>{"--tracker.handshake-timeout", "20s", "--tracker.bundle-timeout",
                               "10s"});
  EXPECT_FALSE(tracker_->started());
  EXPECT_NE(tracker_->log().find("--tracker.handshake-timeout"), std::string::npos)
      << tracker_->log();
}

}  // namespace
}  // namespace loco
