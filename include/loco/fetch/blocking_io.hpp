#pragma once
// The blocking steps of loco's HTTP clients (fetch/http_get.hpp, etcd's http_post), each with a
// deadline: Asio's blocking calls take no timeout, so a step runs one asynchronous operation on
// the client's own io_context until it ends, and the stream's expiry is its deadline.

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <string>

namespace loco::fetch {

// Runs the operation `start(done)` begins until it calls `done(ec, ...)`; returns ec.
template <class Start>
boost::beast::error_code run_one(boost::asio::io_context& io, Start start) {
  boost::beast::error_code result;
  start([&result](const boost::beast::error_code& ec, auto&&...) { result = ec; });
  io.restart();
  io.run();
  return result;
}

// Resolves host:port and connects `stream` (of `io`) within `timeout`. On a failure returns its
// error and sets `step` to the step that failed: "resolving" or "connecting".
boost::beast::error_code connect_within(boost::asio::io_context& io,
                                        boost::beast::tcp_stream& stream, const std::string& host,
                                        const std::string& port, std::chrono::milliseconds timeout,
                                        const char*& step);

}  // namespace loco::fetch
