#pragma once
// Both ends of a status server test: the server on 127.0.0.1:0 with its io_context on a thread of
// its own, and a client (../support/http_client.hpp) whose every read and write has a hang guard.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "../support/http_client.hpp"
#include "tracker/status_http.hpp"

namespace loco::test {

class ServerThread {
  // Runs `f` on the server's thread and returns its result.
  template <typename F>
  auto on_server(F f) {
    auto promise = std::make_shared<std::promise<decltype(f())>>();
    asio::post(io_, [promise, f] { promise->set_value(f()); });
    return promise->get_future().get();
  }

 public:
  explicit ServerThread(tracker::StatusSource status, tracker::StatusHttpLimits limits = {},
                        tracker::ModelSource model = {})
      : server_(tracker::StatusHttpServer::create(io_, {asio::ip::make_address("127.0.0.1"), 0},
                                                  std::move(status), limits, std::move(model))) {
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ServerThread() {
    stop();
    work_.reset();
    thread_.join();  // run() returns once the stopped server's connections have ended
  }
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  tcp::endpoint endpoint() const { return server_->local_endpoint(); }
  std::size_t connections() {
    return on_server([this] { return server_->connections(); });
  }
  // Waits until the server counts `n` open connections (it sees a close a little after the
  // client does); false past the hang guard.
  bool wait_for_connections(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
    while (connections() != n) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  void stop() {
    on_server([this] {
      server_->stop();
      return 0;
    });
  }

 private:
  asio::io_context io_;
  // Keeps run() going after stop(), so that on_server() still works then.
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::shared_ptr<tracker::StatusHttpServer> server_;
  std::thread thread_;
};

}  // namespace loco::test
