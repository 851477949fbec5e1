#include "loco/net/connection.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>

#include <boost/asio/write.hpp>

#include "loco/core/assert.hpp"

namespace loco::net {
namespace {

namespace asio = boost::asio;
using boost::asio::ip::tcp;

// Keepalive probes find a peer that vanished without a FIN (a crashed machine, a NAT that forgot
// us) after about a minute instead of the kernel's default two hours.
void set_socket_options(tcp::socket& socket) {
  socket.set_option(tcp::no_delay(true));
  socket.set_option(asio::socket_base::keep_alive(true));
  const int idle_s = 30, interval_s = 10, probes = 3;
  const int fd = socket.native_handle();
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

}  // namespace

struct Connection::Private {};

std::shared_ptr<Connection> Connection::create(tcp::socket socket,
                                               std::unique_ptr<secure::SecureChannel> channel,
                                               ConnectionHandlers handlers,
                                               std::unique_ptr<LinkPacer> pacer) {
  return std::make_shared<Connection>(Private{}, std::move(socket), std::move(channel),
                                      std::move(handlers), std::move(pacer));
}

Connection::Connection(Private, tcp::socket socket, std::unique_ptr<secure::SecureChannel> channel,
                       ConnectionHandlers handlers, std::unique_ptr<LinkPacer> pacer)
    : socket_(std::move(socket)),
      deadline_timer_(socket_.get_executor()),
      read_pacing_timer_(socket_.get_executor()),
      write_pacing_timer_(socket_.get_executor()),
      channel_(std::move(channel)),
      handlers_(std::move(handlers)),
      pacer_(std::move(pacer)) {
  LOCO_ASSERT(channel_ != nullptr, "a connection needs a channel");
}

void Connection::start() {
  try {
    set_socket_options(socket_);
  } catch (const boost::system::system_error& e) {
    fail(Error(ErrorCategory::network,
               fmt::format("setting socket options for {}: {}", channel_->peer_name(), e.what())));
    return;
  }
  start_read();
  pump_writes();
}

void Connection::start_read() {
  LOCO_ASSERT(!reading_, "one outstanding read per connection");
  reading_ = true;
  const auto target = channel_->read_buffer();
  socket_.async_read_some(
      asio::buffer(target.data(), target.size()),
      [self = shared_from_this()](const boost::system::error_code& error, std::size_t bytes) {
        self->on_read(error, bytes);
      });
}

void Connection::on_read(const boost::system::error_code& error, std::size_t bytes) {
  reading_ = false;
  if (ended_) return;
  cut_by_peer_ = error == asio::error::eof || error == asio::error::connection_reset;
  if (error == asio::error::eof) {
    try {
      channel_->handle_eof();
    } catch (const Error& e) {
      fail(e);
    }
    return;  // the peer's close frame came first: we finish once ours is out (maybe_finish)
  }
  if (error) {
    fail(Error(ErrorCategory::network,
               fmt::format("reading from {}: {}", channel_->peer_name(), error.message())));
    return;
  }
  const TimePoint t = steady_now();
  ++read_counters_.reads;
  read_counters_.bytes += bytes;
  read_counters_.last = t;
  try {
    channel_->handle_read(t, bytes);
  } catch (const Error& e) {
    fail(e);
    return;
  }
  // Asked before the events run: they may send, and the pacer wants its calls in time order.
  const TimePoint next_read = pacer_ != nullptr ? pacer_->on_receive(t, bytes) : t;
  dispatch_events();
  if (ended_) return;
  pump_writes();
  if (ended_) return;
  if (next_read <= t) {
    continue_reading();
    return;
  }
  reading_ = true;                  // the paced wait stands for the read it delays
  if (next_read == kNever) return;  // a stalled link: the channel's timeouts end it
  read_pacing_timer_.expires_at(to_steady(next_read));
  read_pacing_timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
    self->reading_ = false;
    if (!self->ended_) self->continue_reading();
  });
}

void Connection::continue_reading() {
  if (!reading_paused_) start_read();
}

void Connection::pause_reading() {
  reading_paused_ = true;
}

void Connection::resume_reading() {
  reading_paused_ = false;
  // A read (or the paced wait for one) still outstanding continues by itself.
  if (!ended_ && !reading_) start_read();
}

// A handler that refuses what the peer sent throws loco::Error: that ends this connection, never
// the event loop (and with it every other connection of the process).
void Connection::dispatch_events() {
  while (auto event = channel_->poll_event()) {
    if (ended_) return;
    try {
      switch (event->kind) {
        case secure::ChannelEvent::Kind::established:
          if (handlers_.on_established) handlers_.on_established();
          break;
        case secure::ChannelEvent::Kind::chunk:
          if (handlers_.on_chunk) handlers_.on_chunk(*event);
          break;
        case secure::ChannelEvent::Kind::closed:
          peer_closed_ = true;
          close();  // answer with our own close frame after what is queued
          break;
      }
    } catch (const Error& e) {
      fail(e);
      return;
    }
  }
}

bool Connection::send(std::uint16_t type, std::span<const std::byte> bytes,
                      std::function<void()> on_sent) {
  return send(type, std::vector{bytes}, std::move(on_sent));
}

bool Connection::send(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
                      std::function<void()> on_sent) {
  return queue(type, std::move(parts), std::move(on_sent), false);
}

bool Connection::send_ahead(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
                            std::function<void()> on_sent) {
  return queue(type, std::move(parts), std::move(on_sent), true);
}

bool Connection::queue(std::uint16_t type, std::vector<std::span<const std::byte>> parts,
                       std::function<void()> on_sent, bool ahead) {
  if (ended_ || close_requested_) return false;
  LOCO_ASSERT(!parts.empty(), "a message has at least one part (which may be empty)");
  const auto first = parts.front();
  auto at = outgoing_.end();
  if (ahead) {  // behind the message begun, if any, and the ones sent ahead before this one
    at = outgoing_.begin();
    while (at != outgoing_.end() && (at->begun || at->ahead)) ++at;
  }
  outgoing_.insert(at, Outgoing{.type = type,
                                .parts = std::move(parts),
                                .part = 0,
                                .rest = first,
                                .on_sent = std::move(on_sent),
                                .begun = false,
                                .ahead = ahead});
  pump_writes();
  return true;
}

void Connection::close() {
  close_requested_ = true;
  pump_writes();
}

void Connection::close_without_waiting() {
  if (ended_) return;
  wait_for_peer_close_ = false;
  if (!channel_->established()) {
    end(nullptr);  // nothing authenticated to say yet
    return;
  }
  close();
  maybe_finish();  // the close frame may already be written
}

void Connection::pump_writes() {
  if (ended_) return;
  // Start the next write before encrypting more: the socket drains while the cipher runs.
  if (!writing_ && !channel_->poll_transmit().empty()) write_front();
  if (ended_) return;
  std::vector<std::function<void()>> sent;
  try {
    // Encrypt only as much as the window allows: the rest of a large message waits in the
    // caller's buffer until the socket has drained.
    while (channel_->established() && !outgoing_.empty() &&
           channel_->pending_transmit_bytes() < send_window_) {
      Outgoing& message = outgoing_.front();
      if (!message.begun) {
        std::uint64_t size = 0;
        for (const auto& part : message.parts) size += part.size();
        channel_->begin_message(steady_now(), message.type, size);
        message.begun = true;
      }
      while (channel_->chunk_capacity() > 0 && channel_->pending_transmit_bytes() < send_window_) {
        while (message.rest.empty()) message.rest = message.parts[++message.part];
        const std::size_t n = std::min(channel_->chunk_capacity(), message.rest.size());
        channel_->write_chunk(message.rest.first(n));
        message.rest = message.rest.subspan(n);
      }
      if (channel_->chunk_capacity() > 0) break;
      if (message.on_sent) sent.push_back(std::move(message.on_sent));
      outgoing_.pop_front();
    }
    if (close_requested_ && !close_queued_ && outgoing_.empty() && channel_->established()) {
      channel_->close(steady_now());
      close_queued_ = true;
    }
  } catch (const Error& e) {
    fail(e);
    return;
  }
  if (pacer_ != nullptr) pace_new_bytes(steady_now());  // releases are computed as bytes are queued
  if (!writing_) write_front();
  if (!ended_) arm_deadline();
  for (auto& callback : sent) callback();
}

void Connection::pace_new_bytes(TimePoint now) {
  std::size_t unpaced = channel_->pending_transmit_bytes() - paced_bytes_;
  // Topped up again as each piece is written (on_write -> pump_writes).
  const auto enough_ahead = [&] {
    return paced_.size() >= kPacedPiecesAhead && paced_.back().release > now + kPaceAhead;
  };
  while (unpaced > 0 && !enough_ahead()) {
    const std::size_t piece = std::min(unpaced, kPacedPieceBytes);
    const LinkPacer::SendDecision decision = pacer_->on_send(now, piece);
    paced_.push_back(PacedPiece{piece, decision.release, decision.drop_connection});
    paced_bytes_ += piece;
    unpaced -= piece;
  }
}

void Connection::write_front() {
  LOCO_ASSERT(!writing_, "one outstanding write per connection");
  const auto bytes = channel_->poll_transmit();
  if (bytes.empty()) {
    maybe_finish();
    return;
  }
  if (pacer_ == nullptr) {
    start_write(bytes);
    return;
  }
  const TimePoint t = steady_now();
  pace_new_bytes(t);
  const PacedPiece& piece = paced_.front();
  const auto slice = bytes.first(std::min(bytes.size(), piece.bytes));
  if (piece.release <= t && piece.drop) {
    fail(Error(ErrorCategory::network,
               fmt::format("link emulation dropped the connection to {}", channel_->peer_name())));
  } else if (piece.release <= t) {
    start_write(slice);
  } else if (piece.release != kNever) {  // kNever: a stalled link; the progress timeout ends it
    writing_ = true;                     // the paced wait stands for the write it delays
    write_pacing_timer_.expires_at(to_steady(piece.release));
    write_pacing_timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
      self->writing_ = false;
      if (!self->ended_) self->write_front();
    });
  }
}

void Connection::start_write(std::span<const std::byte> bytes) {
  LOCO_ASSERT(!writing_, "one outstanding write per connection");
  writing_ = true;
  // The bytes stay put until handle_transmitted(): later frames queue behind them.
  asio::async_write(socket_, asio::buffer(bytes.data(), bytes.size()),
                    [self = shared_from_this()](const boost::system::error_code& error,
                                                std::size_t n) { self->on_write(error, n); });
}

void Connection::on_write(const boost::system::error_code& error, std::size_t bytes) {
  writing_ = false;
  if (ended_) return;
  if (error) {
    fail(Error(ErrorCategory::network,
               fmt::format("writing to {}: {}", channel_->peer_name(), error.message())));
    return;
  }
  channel_->handle_transmitted(steady_now(), bytes);
  if (pacer_ != nullptr) {
    paced_bytes_ -= bytes;
    if ((paced_.front().bytes -= bytes) == 0) paced_.pop_front();
  }
  pump_writes();
}

void Connection::arm_deadline() {
  const TimePoint deadline = channel_->poll_timeout();
  if (deadline == kNever || (deadline_armed_ && armed_for_ <= deadline)) return;
  // Re-armed only when the deadline moves earlier; a later one is picked up when this one fires.
  deadline_armed_ = true;
  armed_for_ = deadline;
  deadline_timer_.expires_at(to_steady(deadline));
  deadline_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
    if (error == asio::error::operation_aborted || self->ended_) return;
    self->deadline_armed_ = false;
    try {
      self->channel_->handle_timeout(steady_now());
    } catch (const Error& e) {
      self->fail(e);
      return;
    }
    self->arm_deadline();
  });
}

void Connection::maybe_finish() {
  if (ended_ || !close_queued_ || channel_->pending_transmit_bytes() > 0 || writing_) return;
  if (peer_closed_ || !wait_for_peer_close_) {
    end(nullptr);
    return;
  }
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_send, ignored);  // our close frame is out
}

void Connection::fail(const Error& error) {
  if (ended_) return;
  if (!quiet_)
    spdlog::warn("connection closed: {} [{}]", error.what(), to_string(error.category()));
  end(&error);
}

void Connection::end(const Error* error) {
  ended_ = true;
  deadline_timer_.cancel();
  read_pacing_timer_.cancel();
  write_pacing_timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  outgoing_.clear();
  if (handlers_.on_closed) handlers_.on_closed(error);
}

}  // namespace loco::net
