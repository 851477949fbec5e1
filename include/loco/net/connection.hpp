#pragma once
// The Asio driver of one SecureChannel over TCP (loco/secure/secure_channel.hpp): it moves the
// channel's bytes through the socket, runs its timers on a steady_clock, and optionally passes
// every chunk through a LinkPacer (WAN emulation) on the way out and every read on the way in.
//
// Discipline: at most one outstanding read and one outstanding write (asserted); every handler
// holds a shared_ptr to the connection; I/O starts in start(), not in the constructor; state is
// updated before any user callback runs. All methods must be called on the io_context's thread.
//
// Link emulation: the channel's queued bytes are offered to the pacer in pieces of at most
// kPacedPieceBytes, a little ahead of the socket (kPacedPiecesAhead pieces, or until the last
// release is kPaceAhead away), and each piece is written at its release time; queueing ahead
// lets latency pipeline instead of stopping every piece for a round trip. Not further ahead: the
// peer's connections share its link in the order they ask (link/shaper.hpp), so a connection
// that reserved all it had queued would hold every other one's data behind it, where a real
// uplink interleaves flows (TCP's shares of a bottleneck, fq_codel). Found in CI: a donor on a
// 120 kbit/s link reserved 433 KB of state for a fetch; its round's messages on its other links
// waited 29 s behind them, and its own progress timeout dropped those links.
// Sending: send() queues a message whose bytes the caller keeps alive until its `on_sent`
// callback; the connection encrypts it chunk by chunk into frame buffers only as the socket
// drains (at most kSendWindowBytes queued, or what set_send_window() says), so a large tensor is
// never copied whole. A message
// may be given as several parts (a gather list): they are sent as one message, and no frame
// straddles two parts.
// Receiving: on_chunk gets each decrypted chunk in order; its data is valid during the call. A
// handler may throw loco::Error to refuse what the peer sent: the connection then fails with that
// error, like any other, and the event loop goes on.
// pause_reading() stops reading after the read in progress (a consumer that cannot keep up, or
// a stream that ran ahead of its siblings: stream_bundle.hpp); TCP flow control then slows the
// sender. The channel's timeouts keep running: a pause must end within its progress timeout.
// Ending: close() sends the authenticated close frame after the queued messages; the connection
// ends cleanly (on_closed(nullptr)) once both close frames crossed. close_without_waiting() ends
// it as soon as our close frame is written (at once if the handshake is not done), for a stream
// this end refuses: its place must not wait on the peer. Any error (authentication, protocol,
// limits, timeouts, a dropped socket) closes the socket, is logged with the peer's name (unless
// set_quiet(): the owner summarises failures, as a listener does for streams not yet admitted),
// and reaches on_closed(&error). on_closed is called exactly once.

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/net/link_pacer.hpp"
#include "loco/secure/secure_channel.hpp"

namespace loco::net {

struct ConnectionHandlers {
  std::function<void()> on_established;
  std::function<void(const secure::ChannelEvent& chunk)> on_chunk;
  std::function<void(const Error* error)> on_closed;  // nullptr: a clean close
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  static constexpr std::size_t kSendWindowBytes = std::size_t{4} << 20;
  static constexpr std::size_t kPacedPieceBytes = std::size_t{64} << 10;
  static constexpr std::size_t kPacedPiecesAhead = 2;
  // Beyond a link's latency and this process's scheduling delays (tens of ms on a loaded machine);
  // the link's burst (link/shaper.hpp) absorbs a later top-up.
  static constexpr Duration kPaceAhead = std::chrono::milliseconds(100);

  // `pacer` (may be null: no link emulation) is this connection's own.
  static std::shared_ptr<Connection> create(boost::asio::ip::tcp::socket socket,
                                            std::unique_ptr<secure::SecureChannel> channel,
                                            ConnectionHandlers handlers,
                                            std::unique_ptr<LinkPacer> pacer = nullptr);

  void start();
  // False (and nothing queued) once the connection is closing or has ended: the peer may close
  // at any moment, so this is an outcome to handle, not a bug.
  bool send(std::uint16_t type, std::span<const std::byte> bytes,
            std::function<void()> on_sent = {});
  bool send(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
            std::function<void()> on_sent = {});
  // Like send(), but ahead of every queued message not begun yet (after those sent ahead
  // before it): a small reply that must not wait behind bulk already queued. The message being
  // encrypted finishes first (a channel writes one message at a time).
  bool send_ahead(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
                  std::function<void()> on_sent = {});
  void close();
  void close_without_waiting();
  void set_quiet(bool quiet) { quiet_ = quiet; }
  // How many encrypted bytes may wait for the socket before encryption stops (at least one frame
  // is encrypted either way). A server with many connections keeps it small: each connection then
  // encrypts a large message as its socket drains, not all at once (tracker/serve.cpp).
  void set_send_window(std::size_t bytes) { send_window_ = bytes; }
  void pause_reading();
  void resume_reading();
  // What the peer may send from its next frame on (secure::SecureChannel::limit_incoming).
  void limit_incoming(std::uint32_t max_frame_bytes, std::uint64_t max_message_bytes) {
    channel_->limit_incoming(max_frame_bytes, max_message_bytes);
  }
  bool established() const { return channel_->established(); }
  // The peer ended the TCP connection (end of stream, or a reset) before its close frame: what a
  // failure that is not a timeout or a bad message looks like.
  bool cut_by_peer() const { return cut_by_peer_; }
  const secure::PublicKey& peer_identity() const { return channel_->peer_identity(); }
  const std::string& peer_name() const { return channel_->peer_name(); }
  // Encrypted bytes waiting for the socket: at most the send window + one frame.
  std::size_t queued_bytes() const { return channel_->pending_transmit_bytes(); }
  // The socket reads completed so far, for diagnostics: a peer whose messages stopped reaching
  // the owner while its bytes were still read (or not) tells where they waited.
  struct ReadCounters {
    std::uint64_t reads = 0;
    std::uint64_t bytes = 0;
    TimePoint last{};  // of the last read that returned bytes
  };
  const ReadCounters& read_counters() const { return read_counters_; }

  struct Private;  // constructor key: create() only

  Connection(Private, boost::asio::ip::tcp::socket socket,
             std::unique_ptr<secure::SecureChannel> channel, ConnectionHandlers handlers,
             std::unique_ptr<LinkPacer> pacer);

 private:
  struct Outgoing {
    std::uint16_t type;
    std::vector<std::span<const std::byte>> parts;
    std::size_t part = 0;             // the part being handed to the channel
    std::span<const std::byte> rest;  // of parts[part], not yet handed to the channel
    std::function<void()> on_sent;
    bool begun = false;
    bool ahead = false;  // sent with send_ahead()
  };
  struct PacedPiece {
    std::size_t bytes;  // not yet written
    TimePoint release;
    bool drop;  // the link fails here: close at `release`
  };

  bool queue(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
             std::function<void()> on_sent, bool ahead);
  void start_read();
  void continue_reading();
  void on_read(const boost::system::error_code& error, std::size_t bytes);
  void dispatch_events();
  void fill_channel();
  void pump_writes();
  void pace_new_bytes(TimePoint now);
  void write_front();
  void start_write(std::span<const std::byte> bytes);
  void on_write(const boost::system::error_code& error, std::size_t bytes);
  void arm_deadline();
  void maybe_finish();
  void fail(const Error& error);
  void end(const Error* error);

  boost::asio::ip::tcp::socket socket_;
  boost::asio::steady_timer deadline_timer_;
  boost::asio::steady_timer read_pacing_timer_;
  boost::asio::steady_timer write_pacing_timer_;
  std::unique_ptr<secure::SecureChannel> channel_;
  ConnectionHandlers handlers_;
  std::unique_ptr<LinkPacer> pacer_;

  std::deque<Outgoing> outgoing_;
  std::deque<PacedPiece> paced_;  // covers the first paced_bytes_ of the channel's queue
  std::size_t paced_bytes_ = 0;
  std::size_t send_window_ = kSendWindowBytes;
  ReadCounters read_counters_;
  bool reading_ = false;
  bool reading_paused_ = false;
  bool writing_ = false;
  bool deadline_armed_ = false;
  TimePoint armed_for_ = kNever;
  bool close_requested_ = false;
  bool wait_for_peer_close_ = true;
  bool quiet_ = false;
  bool close_queued_ = false;
  bool peer_closed_ = false;
  bool cut_by_peer_ = false;
  bool ended_ = false;
};

}  // namespace loco::net
