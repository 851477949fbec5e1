// A loco-peer still joining (its tracker silent) leaves at once on SIGTERM instead of waiting out
// its join timeout. The "tracker" is a socket that accepts and never answers: once it has
// accepted, the peer is inside its join.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"

namespace loco {
namespace {

// A listening socket on a free loopback port that never says anything.
class SilentTracker {
 public:
  SilentTracker() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size);
    ::listen(fd_, 4);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
  }
  ~SilentTracker() {
    if (client_ >= 0) ::close(client_);
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Waits (up to `timeout_ms`) for a connection and keeps it open.
  bool accept(int timeout_ms) {
    pollfd fd{fd_, POLLIN, 0};
    if (::poll(&fd, 1, timeout_ms) != 1) return false;
    client_ = ::accept(fd_, nullptr, nullptr);
    return client_ >= 0;
  }

 private:
  int fd_;
  int client_ = -1;
  int port_ = 0;
};

TEST(PeerJoin, ASignalWhileJoiningStopsThePeerCleanly) {
  test::TempDir dir;
  SilentTracker tracker;
  secure::write_key_file(dir / "peer.key", secure::KeyPair::generate(), false);
  const std::string tracker_key =
      secure::to_hex(secure::KeyPair::generate().public_key());  // nobody holds it
  test::ChildProcess peer(
      {test::program("loco-peer"), "--peer.key", (dir / "peer.key").string(), "--run.id", "r",
       "--run.config", std::string(LOCO_SOURCE_DIR) + "/configs/swarm-tiny.toml",
       "--tracker.address", tracker.address(), "--tracker.public-key", tracker_key},
      dir / "peer.log");
  ASSERT_TRUE(tracker.accept(90'000)) << test::read_text(dir / "peer.log");
  // Joining: the tracker's answer would be awaited for a minute.
  EXPECT_EQ(peer.stop(SIGTERM), 0) << test::read_text(dir / "peer.log");
  EXPECT_NE(test::read_text(dir / "peer.log").find("stopped by a signal before joining the run"),
            std::string::npos)
      << test::read_text(dir / "peer.log");
}

}  // namespace
}  // namespace loco
