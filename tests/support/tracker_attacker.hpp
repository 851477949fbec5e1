#pragma once
// An authenticated peer attacking a real loco-tracker: a RawPeer on a blocking socket that
// connects, completes the handshake and the bundle hello (one stream), and then sends whatever
// frames the test seals. Many attackers share one io_context (each would otherwise hold its own
// descriptors).

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <string>
#include <vector>

#include "loco/net/stream_hello.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/secure/identity.hpp"
#include "raw_peer.hpp"

namespace loco::test {

// A join request's type: the one message the tracker takes (up to 64 KiB) from a peer that has not
// joined, so its first chunk is taken in.
inline constexpr std::uint16_t kJoinRequestType =
    static_cast<std::uint16_t>(proto::MessageType::join_request);

class TrackerAttacker {
 public:
  using Bytes = std::vector<std::byte>;

  // Connected and admitted on return.
  TrackerAttacker(boost::asio::io_context& io, const std::string& host, const std::string& port,
                  const std::string& run_id)
      : TrackerAttacker(io, host, port, run_id, false) {
    finish();
  }

  // Connected, its first handshake message sent: finish() completes the handshake and the hello.
  // Many attackers set up in two passes wait for the tracker's round trips together.
  static std::unique_ptr<TrackerAttacker> start(boost::asio::io_context& io,
                                                const std::string& host, const std::string& port,
                                                const std::string& run_id) {
    return std::unique_ptr<TrackerAttacker>(new TrackerAttacker(io, host, port, run_id, false));
  }

  void finish() {
    Bytes reply(secure::Handshake::kMessage2Bytes);
    boost::asio::read(socket_, boost::asio::buffer(reply));
    peer_.give(reply);
    send(peer_.take());
    const auto hello = net::encode_stream_hello({.index = 0, .count = 1, .unit_bytes = 4096});
    send(peer_.data(net::kStreamHelloType, hello.size(), 0, hello));
    Bytes welcome;
    read_frame(welcome);  // the tracker adopted the stream
  }

  void send(const Bytes& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  RawPeer& peer() { return peer_; }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  // Reads one frame; false when the tracker closed the connection.
  bool read_frame(Bytes& chunk) {
    std::array<std::byte, secure::kFrameHeaderBytes> header{};
    boost::system::error_code error;
    boost::asio::read(socket_, boost::asio::buffer(header), error);
    if (error) return false;
    Bytes frame(header.begin(), header.end());
    frame.resize(header.size() + peer_.body_bytes(header));
    boost::asio::read(
        socket_, boost::asio::buffer(frame.data() + header.size(), frame.size() - header.size()),
        error);
    if (error) return false;
    return peer_.open(frame, chunk).kind == secure::FrameKind::data;
  }

  // True once the tracker has ended the connection (close frame or EOF).
  bool closed_by_tracker() {
    Bytes chunk;
    while (read_frame(chunk)) {
    }
    return true;
  }

 private:
  TrackerAttacker(boost::asio::io_context& io, const std::string& host, const std::string& port,
                  const std::string& run_id, bool /*started*/)
      : peer_(key_, run_id), socket_(io) {
    boost::asio::connect(socket_, boost::asio::ip::tcp::resolver(io).resolve(host, port));
    send(peer_.take());
  }

  secure::KeyPair key_ = secure::KeyPair::generate();
  RawPeer peer_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace loco::test
