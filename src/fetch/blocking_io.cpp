#include "loco/fetch/blocking_io.hpp"

#include <boost/asio/ip/tcp.hpp>

namespace loco::fetch {

boost::beast::error_code connect_within(boost::asio::io_context& io,
                                        boost::beast::tcp_stream& stream, const std::string& host,
                                        const std::string& port, std::chrono::milliseconds timeout,
                                        const char*& step) {
  using tcp = boost::asio::ip::tcp;
  tcp::resolver resolver(io);
  tcp::resolver::results_type endpoints;
  step = "resolving";
  boost::beast::error_code ec = run_one(io, [&](auto done) {
    resolver.async_resolve(
        host, port, [&, done](const boost::beast::error_code& e, tcp::resolver::results_type r) {
          endpoints = std::move(r);
          done(e);
        });
  });
  if (ec) return ec;
  step = "connecting";
  stream.expires_after(timeout);
  return run_one(io, [&](auto done) { stream.async_connect(endpoints, done); });
}

}  // namespace loco::fetch
