#pragma once
// An HTTP/1.1 client for tests, over one connection, whose every read and write has a hang guard
// (a stuck server fails the test after kHangGuard instead of hanging it).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <string>
#include <string_view>

namespace loco::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline constexpr auto kHangGuard = std::chrono::seconds(30);

class TestClient {
 public:
  struct Reply {
    beast::error_code error;  // what ended the connection instead of a response
    http::response<http::string_body> response;
  };

  // From `source`, a loopback address (Linux routes all of 127/8 to lo), or the default one.
  explicit TestClient(const tcp::endpoint& server, const std::string& source = "") {
    if (!source.empty()) {
      stream_.socket().open(tcp::v4());
      stream_.socket().bind({asio::ip::make_address(source), 0});
    }
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

// "HOST:PORT" (an IPv4 address and a port) as an endpoint.
inline tcp::endpoint endpoint_of(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  return {asio::ip::make_address(host_port.substr(0, colon)),
          static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1)))};
}

}  // namespace loco::test
