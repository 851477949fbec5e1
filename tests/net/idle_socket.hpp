#pragma once
// Idle TCP connections from a chosen loopback address (Linux routes all of 127/8 to lo), as a
// flood or a slow loris would open them, on a test's io_context.

#include <array>
#include <boost/asio.hpp>
#include <memory>
#include <string>
#include <vector>

namespace loco::net::testing {

// A TCP connection that never sends a byte (a slow loris) from `source`; `dropped` once the
// listener has closed it (or refused it).
class IdleSocket {
 public:
  IdleSocket(boost::asio::io_context& io, const std::string& source,
             const boost::asio::ip::tcp::endpoint& to)
      : socket_(io) {
    socket_.open(boost::asio::ip::tcp::v4());
    socket_.bind({boost::asio::ip::make_address(source), 0});
    socket_.async_connect(to, [this](const boost::system::error_code& error) {
      if (error) {
        dropped = true;
        return;
      }
      read();
    });
  }
  void close() { socket_.close(); }
  bool dropped = false;

 private:
  void read() {
    socket_.async_read_some(boost::asio::buffer(buffer_),
                            [this](const boost::system::error_code& error, std::size_t) {
                              if (error) {
                                dropped = true;
                                return;
                              }
                              read();
                            });
  }
  boost::asio::ip::tcp::socket socket_;
  std::array<char, 256> buffer_{};
};

inline std::size_t count_dropped(const std::vector<std::unique_ptr<IdleSocket>>& sockets) {
  std::size_t n = 0;
  for (const auto& s : sockets) n += s->dropped ? 1 : 0;
  return n;
}

}  // namespace loco::net::testing
