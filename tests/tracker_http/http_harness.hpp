#pragma once
// Both ends of a status server test: the server on 127.0.0.1:0 with its io_context on a thread of
// its own, and a client whose every read and write has a hang guard (a stuck server fails the
// test after kHangGuard instead of hanging it).

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "tracker/status_http.hpp"

namespace loco::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline constexpr auto kHangGuard = std::chrono::seconds(30);

class ServerThread {
  // Runs `f` on the server's thread and returns its result.
  template <typename F>
  auto on_server(F f) {
    auto promise = std::make_shared<std::promise<decltype(f())>>();
    asio::post(io_, [promise, f] { promise->set_value(f()); });
    return promise->get_future().get();
  }

 public:
  explicit ServerThread(tracker::StatusSource status, tracker::StatusHttpLimits limits = {})
      : server_(tracker::StatusHttpServer::create(io_, {asio::ip::make_address("127.0.0.1"), 0},
                                                  std::move(status), limits)) {
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

class TestClient {
 public:
  struct Reply {
    beast::error_code error;  // what ended the connection instead of a response
    http::response<http::string_body> response;
  };

  explicit TestClient(const tcp::endpoint& server) {
    const auto error = run([&](auto done) { stream_.async_connect(server, done); });
    if (error) throw beast::system_error(error);
  }

  // Sends bytes as they are; false when the server had closed the connection.
  bool send(std::string_view raw) {
    return !run([&](auto done) { asio::async_write(stream_, asio::buffer(raw), done); });
  }

  Reply read_response(bool head = false) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(1 << 20);
    parser.skip(head);  // a response to HEAD has a length but no body
    Reply reply;
    reply.error = run([&](auto done) { http::async_read(stream_, buffer_, parser, done); });
    if (!reply.error) reply.response = parser.release();
    return reply;
  }

  Reply request(http::verb method, std::string_view target, bool keep_alive = true) {
    http::request<http::empty_body> request{method,
                                            beast::string_view(target.data(), target.size()), 11};
    request.set(http::field::host, "127.0.0.1");
    request.keep_alive(keep_alive);
    Reply reply;
    reply.error = run([&](auto done) { http::async_write(stream_, request, done); });
    return reply.error ? reply : read_response(method == http::verb::head);
  }
  Reply get(std::string_view target) { return request(http::verb::get, target); }

 private:
  template <typename Start>
  beast::error_code run(Start start) {
    beast::error_code result;
    stream_.expires_after(kHangGuard);
    start([&](const beast::error_code& error, auto&&...) { result = error; });
    io_.restart();
    io_.run();
    return result;
  }

  asio::io_context io_;
  beast::tcp_stream stream_{io_};
  beast::flat_buffer buffer_;
};

}  // namespace loco::test
