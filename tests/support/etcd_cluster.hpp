#pragma once
// A real etcd cluster for one test: N members (Debian's etcd-server, scripts/install-deps.sh) on
// loopback ports in a temporary directory, started together and killed when the object dies.
// Short raft timers (50 ms heartbeat, 500 ms election) let leases as short as 1 s be granted,
// so a test sees a lease expire in about a second.

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "child_process.hpp"
#include "loco/core/error.hpp"
#include "loco/etcd/etcd_client.hpp"
#include "loco/replica/fenced_state.hpp"
#include "temp_dir.hpp"

namespace loco::test {

inline constexpr const char* kEtcdBinary = "/usr/bin/etcd";

// A loopback port nobody listens on now (the kernel's choice; a tiny race with other tests).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("no free loopback port");
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

class EtcdCluster {
 public:
  // `request_bytes`: each member's --max-request-bytes; by default what replicas need
  // (docs/TRACKER.md, "Running replicas"), 0 for etcd's own default (1.5 MiB).
  explicit EtcdCluster(int members, std::size_t request_bytes = replica::kStoreRequestBytes) {
    if (!std::filesystem::exists(kEtcdBinary))
      throw std::runtime_error("etcd is not installed: run scripts/install-deps.sh");
    std::vector<int> peer_ports;
    std::string initial;
    for (int i = 0; i < members; ++i) {
      client_ports_.push_back(free_loopback_port());
      peer_ports.push_back(free_loopback_port());
      initial += (i ? "," : "") + name(i) + "=" + url(peer_ports[i]);
    }
    for (int i = 0; i < members; ++i) {
      std::vector<std::string> arguments{kEtcdBinary,
                                         "--name",
                                         name(i),
                                         "--data-dir",
                                         (dir_ / name(i)).string(),
                                         "--listen-client-urls",
                                         url(client_ports_[i]),
                                         "--advertise-client-urls",
                                         url(client_ports_[i]),
                                         "--listen-peer-urls",
                                         url(peer_ports[i]),
                                         "--initial-advertise-peer-urls",
                                         url(peer_ports[i]),
                                         "--initial-cluster",
                                         initial,
                                         "--initial-cluster-state",
                                         "new",
                                         "--initial-cluster-token",
                                         "loco-test",
                                         "--heartbeat-interval",
                                         "50",
                                         "--election-timeout",
                                         "500",
                                         "--logger",
                                         "zap",
                                         "--log-level",
                                         "warn"};
      if (request_bytes != 0) {
        arguments.push_back("--max-request-bytes");
        arguments.push_back(std::to_string(request_bytes));
      }
      processes_.push_back(
          std::make_unique<ChildProcess>(std::move(arguments), dir_ / (name(i) + ".log")));
    }
    wait_until_serving();
  }

  // Every member's endpoint, in order (a client tries them in this order).
  std::vector<etcd::EtcdEndpoint> endpoints() const {
    std::vector<etcd::EtcdEndpoint> out;
    for (int port : client_ports_) out.push_back({"127.0.0.1", std::to_string(port)});
    return out;
  }

  etcd::EtcdClientOptions client_options() const {
    etcd::EtcdClientOptions options;
    options.endpoints = endpoints();
    options.io_timeout = std::chrono::seconds(1);
    return options;
  }

  void kill_member(int i) { processes_.at(i)->stop(SIGKILL); }
  // True when `signal` was delivered to member `i` (SIGSTOP freezes it: its socket still accepts
  // connections and requests, and nothing answers them until SIGCONT).
  bool signal_member(int i, int signal) { return ::kill(processes_.at(i)->pid(), signal) == 0; }

 private:
  static std::string name(int i) { return "m" + std::to_string(i); }
  static std::string url(int port) { return "http://127.0.0.1:" + std::to_string(port); }

  // Until a linearizable read succeeds: the members found each other and elected a raft leader.
  // A hang guard of 60 s, not a speed assertion.
  void wait_until_serving() {
    etcd::EtcdClient client(client_options());
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      try {
        client.range(replica::one_key("/ready"));
        return;
      } catch (const Error& e) {
        if (std::chrono::steady_clock::now() > give_up)
          throw std::runtime_error("etcd never served: " + e.message());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  TempDir dir_;
  std::vector<int> client_ports_;
  std::vector<std::unique_ptr<ChildProcess>> processes_;
};

}  // namespace loco::test
