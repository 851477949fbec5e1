// EtcdClient against a fake etcd on loopback that lies about sizes and breaks off: every lie is a
// typed error before the client holds what it was promised, and a member that cannot be reached
// or has no raft leader is skipped for the next one.

#include "loco/etcd/etcd_client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "../support/etcd_cluster.hpp"
#include "loco/core/error.hpp"

namespace loco::etcd {
namespace {

using replica::one_key;

// Answers every connection with `answer` (then `repeat` more times `tail`, for an endless body),
// after reading the request's header and body.
class LyingServer {
 public:
  explicit LyingServer(std::string answer, std::string tail = {}, int repeat = 0)
      : answer_(std::move(answer)), tail_(std::move(tail)), repeat_(repeat) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~LyingServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }

  EtcdEndpoint endpoint() const { return {"127.0.0.1", std::to_string(port_)}; }
  int connections() const { return connections_; }

 private:
  void serve() {
    while (true) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      ++connections_;
      read_request(client);
      bool open = write_all(client, answer_);
      for (int i = 0; open && i < repeat_; ++i) open = write_all(client, tail_);
      ::close(client);
    }
  }
  static void read_request(int client) {
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(client, buffer, sizeof(buffer));
      if (n <= 0) return;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    const std::size_t at = request.find("Content-Length: ");
    const std::size_t body = request.find("\r\n\r\n") + 4;
    const std::size_t length = at == std::string::npos ? 0 : std::stoul(request.substr(at + 16));
    while (request.size() < body + length) {
      const ssize_t n = ::read(client, buffer, sizeof(buffer));
      if (n <= 0) return;
      request.append(buffer, static_cast<std::size_t>(n));
    }
  }
  static bool write_all(int client, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(client, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  std::string answer_, tail_;
  int repeat_ = 0;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

std::string http_200(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

EtcdClientOptions options_for(std::vector<EtcdEndpoint> endpoints) {
  EtcdClientOptions options;
  options.endpoints = std::move(endpoints);
  options.io_timeout = std::chrono::seconds(5);
  options.limits.max_body_bytes = 64 << 10;
  return options;
}

ErrorCategory category_of_range(const LyingServer& server) {
  EtcdClient client(options_for({server.endpoint()}));
  try {
    client.range(one_key("k"));
  } catch (const Error& e) {
    return e.category();
  }
  ADD_FAILURE() << "the lie was accepted";
  return ErrorCategory::invalid_argument;
}

TEST(EtcdClient, RefusesAnswersOverItsLimitsBeforeHoldingThem) {
  // A declared length of 1 TB: refused on the header, nothing reserved.
  EXPECT_EQ(category_of_range(LyingServer(
                "HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n{\"header\":")),
            ErrorCategory::format);
  // A chunked body that never ends: refused once it passes the cap.
  EXPECT_EQ(category_of_range(LyingServer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
                                          "4000\r\n" + std::string(0x4000, ' ') + "\r\n", 100)),
            ErrorCategory::format);
  // A header that never ends.
  EXPECT_EQ(category_of_range(LyingServer("HTTP/1.1 200 OK\r\nX: ", std::string(4096, 'x'), 100)),
            ErrorCategory::format);
  // A well-formed answer with a key outside the one asked for.
  EXPECT_EQ(category_of_range(LyingServer(
                http_200(R"({"header":{"revision":"3"},"kvs":[{"key":"eg==","create_revision":"2",)"
                         R"("mod_revision":"2"}],"count":"1"})"))),
            ErrorCategory::format);
  // An error status with a body that is not etcd's error.
  EXPECT_EQ(
      category_of_range(LyingServer("HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nnope!")),
      ErrorCategory::format);
}

TEST(EtcdClient, ABodyCutShortIsANetworkError) {
  EXPECT_EQ(category_of_range(LyingServer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"he")),
            ErrorCategory::network);
}

TEST(EtcdClient, EtcdsRefusalIsAProtocolErrorWithItsMessage) {
  const std::string body =
      R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})";
  LyingServer server("HTTP/1.1 404 Not Found\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\n\r\n" + body);
  EtcdClient client(options_for({server.endpoint()}));
  try {
    client.lease_keepalive(7);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::protocol);
    EXPECT_NE(e.message().find("requested lease not found"), std::string::npos) << e.message();
  }
  EXPECT_NO_THROW(client.lease_revoke(7));  // revoking a lease already gone is not an error
}

TEST(EtcdClient, SkipsAMemberThatIsDownOrHasNoLeader) {
  const EtcdEndpoint down{"127.0.0.1", std::to_string(test::free_loopback_port())};
  LyingServer leaderless("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\n{}");
  LyingServer healthy(http_200(R"({"header":{"revision":"3"}})"));
  EtcdClient client(options_for({down, leaderless.endpoint(), healthy.endpoint()}));
  EXPECT_EQ(client.range(one_key("k")).revision, 3);
  // The member that answered is asked first next time.
  EXPECT_EQ(client.range(one_key("k")).revision, 3);
  EXPECT_EQ(leaderless.connections(), 1);
  EXPECT_EQ(healthy.connections(), 2);

  EtcdClient stranded(options_for({down, leaderless.endpoint()}));
  try {
    stranded.range(one_key("k"));
    ADD_FAILURE() << "no member answered, yet a range came back";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::network);
  }
}

TEST(EtcdClient, ParsesEndpoints) {
  EXPECT_EQ(parse_etcd_endpoint("http://10.0.0.1:2379/").port, "2379");
  EXPECT_EQ(parse_etcd_endpoint("etcd-a:2379").host, "etcd-a");
  for (const char* bad : {"https://a:2379", "a", "a:0", "a:70000", "a:12x", ":2379", "a/b:1"})
    EXPECT_THROW(parse_etcd_endpoint(bad), Error) << bad;
}

}  // namespace
}  // namespace loco::etcd
