#pragma once
// A real TCP relay for tests: accepts one client, connects it to `target`, and forwards bytes both
// ways, flipping one bit of the client-to-target stream at a chosen byte offset (an attacker or a
// broken router on the path).

#include <array>
#include <boost/asio.hpp>
#include <cstdint>
#include <memory>

namespace loco::net::testing {

class FlipRelay {
 public:
  FlipRelay(boost::asio::io_context& io, boost::asio::ip::tcp::endpoint target,
            std::uint64_t flip_offset)
      : acceptor_(io, {boost::asio::ip::address_v4::loopback(), 0}),
        client_(io),
        server_(io),
        target_(target),
        flip_offset_(flip_offset) {
    acceptor_.async_accept(client_, [this](const boost::system::error_code& error) {
      if (error) return;
      server_.async_connect(target_, [this](const boost::system::error_code& connect_error) {
        if (connect_error) return;
        pump(client_, server_, up_, true);
        pump(server_, client_, down_, false);
      });
    });
  }

  boost::asio::ip::tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

 private:
  struct Direction {
    std::array<std::uint8_t, 65536> buffer{};
    std::uint64_t forwarded = 0;
  };

  void pump(boost::asio::ip::tcp::socket& from, boost::asio::ip::tcp::socket& to,
            Direction& direction, bool flips) {
    from.async_read_some(boost::asio::buffer(direction.buffer),
                         [this, &from, &to, &direction, flips](
                             const boost::system::error_code& error, std::size_t n) {
                           if (error) {  // pass the end of the stream (or a reset) on
                             boost::system::error_code ignored;
                             to.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
                             return;
                           }
                           if (flips && flip_offset_ >= direction.forwarded &&
                               flip_offset_ < direction.forwarded + n)
                             direction.buffer[flip_offset_ - direction.forwarded] ^= 0x10;
                           direction.forwarded += n;
                           boost::asio::async_write(
                               to, boost::asio::buffer(direction.buffer.data(), n),
                               [this, &from, &to, &direction, flips](
                                   const boost::system::error_code& write_error, std::size_t) {
                                 if (!write_error) pump(from, to, direction, flips);
                               });
                         });
  }

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ip::tcp::socket client_;
  boost::asio::ip::tcp::socket server_;
  boost::asio::ip::tcp::endpoint target_;
  std::uint64_t flip_offset_;
  Direction up_;
  Direction down_;
};

}  // namespace loco::net::testing
