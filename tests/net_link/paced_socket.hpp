#pragma once
// Test drivers that run a LinkPacer over a real TCP socket with Boost.Asio, the way a
// connection is expected to: the sender asks the pacer for each chunk's release time as soon
// as the chunk is ready, keeps a bounded queue of chunks with their release times, and writes
// the head when its steady_timer fires (one write and one timer outstanding at a time). The
// receiver asks the pacer after each read when it may read again.
//
// Bytes carry a position-dependent pattern so the receiver can check every byte it gets.

#include <algorithm>
#include <boost/asio.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/net/link_pacer.hpp"

namespace loco::net::test {

namespace asio = boost::asio;
using asio::ip::tcp;

inline std::uint8_t pattern_byte(std::uint64_t position) {
  return static_cast<std::uint8_t>((position * 131 + (position >> 16)) & 0xff);
}

inline TimePoint now() {
  return steady_now();
}

// Connects a client socket to a fresh loopback acceptor; returns {client, server}.
inline std::pair<tcp::socket, tcp::socket> loopback_pair(asio::io_context& io) {
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  tcp::socket server = acceptor.accept();
  client.set_option(tcp::no_delay(true));
  server.set_option(tcp::no_delay(true));
  return {std::move(client), std::move(server)};
}

// Writes `total` pattern bytes in `chunk`-sized pieces, each when the pacer releases it.
class PacedSender {
 public:
  PacedSender(tcp::socket& socket, LinkPacer& pacer, std::size_t chunk, std::size_t queue_bytes)
      : socket_(socket),
        pacer_(pacer),
        timer_(socket.get_executor()),
        chunk_(chunk),
        queue_bytes_(queue_bytes) {}

  void start(std::uint64_t total) {
    total_ = total;
    refill();
    pump();
  }

 private:
  struct Pending {
    TimePoint release;
    std::vector<std::uint8_t> bytes;
  };

  // Asks the pacer about every chunk that fits in the queue, the moment it is ready.
  void refill() {
    while (produced_ < total_ && queued_ < queue_bytes_) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(chunk_, total_ - produced_));
      Pending p{pacer_.on_send(now(), n).release, std::vector<std::uint8_t>(n)};
      for (std::size_t i = 0; i < n; ++i) p.bytes[i] = pattern_byte(produced_ + i);
      produced_ += n;
      queued_ += n;
      queue_.push_back(std::move(p));
    }
  }

  void pump() {
    if (busy_ || queue_.empty()) return;
    busy_ = true;
    if (queue_.front().release > now()) {
      timer_.expires_at(to_steady(queue_.front().release));
      timer_.async_wait([this](boost::system::error_code) {
        busy_ = false;
        pump();
      });
      return;
    }
    asio::async_write(socket_, asio::buffer(queue_.front().bytes),
                      [this](boost::system::error_code ec, std::size_t) {
                        if (ec) throw boost::system::system_error(ec);
                        queued_ -= queue_.front().bytes.size();
                        queue_.pop_front();
                        busy_ = false;
                        refill();
                        pump();
                      });
  }

  tcp::socket& socket_;
  LinkPacer& pacer_;
  asio::steady_timer timer_;
  std::size_t chunk_;
  std::size_t queue_bytes_;
  std::uint64_t total_ = 0;
  std::uint64_t produced_ = 0;
  std::size_t queued_ = 0;
  std::deque<Pending> queue_;
  bool busy_ = false;  // a write or a timer is outstanding
};

// Reads `total` bytes, checking the pattern; with a pacer, waits before each read as it says.
// `done` gets the time the last byte was read.
class PacedReceiver {
 public:
  PacedReceiver(tcp::socket& socket, LinkPacer* pacer, std::function<void(TimePoint)> done)
      : socket_(socket), pacer_(pacer), timer_(socket.get_executor()), done_(std::move(done)) {}

  void start(std::uint64_t total) {
    total_ = total;
    read();
  }

  std::uint64_t mismatches() const { return mismatches_; }

 private:
  void read() {
    socket_.async_read_some(
        asio::buffer(buffer_), [this](boost::system::error_code ec, std::size_t n) {
          if (ec) throw boost::system::system_error(ec);
          for (std::size_t i = 0; i < n; ++i) {
            if (buffer_[i] != pattern_byte(received_ + i)) ++mismatches_;
          }
          received_ += n;
          const TimePoint t = now();
          if (received_ >= total_) {
            done_(t);
            return;
          }
          const TimePoint next = pacer_ != nullptr ? pacer_->on_receive(t, n) : t;
          if (next <= t) {
            read();
            return;
          }
          timer_.expires_at(to_steady(next));
          timer_.async_wait([this](boost::system::error_code) { read(); });
        });
  }

  tcp::socket& socket_;
  LinkPacer* pacer_;
  asio::steady_timer timer_;
  std::function<void(TimePoint)> done_;
  std::vector<std::uint8_t> buffer_ = std::vector<std::uint8_t>(64 * 1024);
  std::uint64_t total_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t mismatches_ = 0;
};

}  // namespace loco::net::test
