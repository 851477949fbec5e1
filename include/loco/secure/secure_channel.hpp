#pragma once
// One end of an authenticated, encrypted connection, as a sans-I/O state machine: the handshake
// (handshake.hpp), then typed messages cut into AEAD frames (frame_codec.hpp), with the limits
// and timeouts of a connection. No socket and no clock: the driver (net/connection.hpp, or the
// simulator) moves the bytes and passes `now` in.
//
// Receiving, zero-copy: the driver reads into read_buffer() (never larger than the rest of the
// current handshake message or frame, nor than kReadStepBytes), then calls handle_read(now, n)
// and drains poll_event() before the next read; a chunk event's data points into the channel and
// is valid until the next read_buffer() or handle_*() call. deliver() below does this for bytes
// that are already in memory. The receive buffer grows as a frame's bytes arrive (doubling from
// kFirstReadBytes, at most kReadStepBytes at a time), not when its header announces them, and one
// above kFirstReadBytes is given back once its message is complete, so an idle connection holds
// no frame-sized buffer. limit_incoming() lowers or raises what the peer may send from the next
// frame on, as the connection's owner moves it between states (net/bundle_listener.hpp: a stream
// waiting for its bundle may send only its hello). A message's size and type are fixed by its
// first chunk; a
// later chunk that states others is a protocol error, so every chunk event of one message carries
// the same message_size and type. Sending: after the `established` event, begin_message(now, type,
// size) then write_chunk() until `size` bytes were written (each chunk at most chunk_capacity()
// bytes, encrypted in one pass into its own frame buffer); close() queues the authenticated close
// frame. The driver writes poll_transmit() (the oldest unsent frame; its bytes stay put while later
// frames are queued) and reports handle_transmitted(now, n). pending_transmit_bytes() is the
// backpressure signal. Timers: after any handle_*(), poll_timeout() is the next deadline; at it,
// call handle_timeout(now). Extra polls are harmless.
//
// Every handle_*() and begin/write may throw loco::Error naming the peer (crypto, protocol,
// resource, network); the channel is then dead: the driver closes the connection.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/secure/frame_codec.hpp"
#include "loco/secure/handshake.hpp"

namespace loco::secure {

struct ChannelConfig {
  std::string run_id;
  std::uint64_t max_message_bytes = std::uint64_t{1} << 30;  // larger incoming: error
  std::uint32_t max_frame_bytes = 1u << 20;  // chunk per frame we send; larger incoming: error
  Duration handshake_timeout = std::chrono::seconds(10);
  Duration idle_timeout = std::chrono::minutes(5);       // no bytes at all from the peer
  Duration progress_timeout = std::chrono::seconds(30);  // a message or our sending stalls
};

struct ChannelEvent {
  enum class Kind { established, chunk, closed };
  Kind kind = Kind::established;
  std::uint16_t message_type = 0;
  std::uint64_t message_size = 0;
  std::uint64_t offset = 0;         // of `data` within the message
  std::span<const std::byte> data;  // valid until the next read_buffer() or handle_*() call

  bool last_chunk() const { return offset + data.size() == message_size; }
};

class SecureChannel {
 public:
  static constexpr std::size_t kReadStepBytes = std::size_t{64} << 10;
  static constexpr std::size_t kFirstReadBytes = std::size_t{4} << 10;

  // `identity` must outlive the channel (the handshake signs with it). `ephemeral_seed`: fresh
  // per connection (fresh_ephemeral_seed()), see Handshake.
  SecureChannel(Role role, const KeyPair& identity, ChannelConfig config, AcceptIdentity accept,
                std::string peer_label, TimePoint now, const EphemeralSeed& ephemeral_seed);
  ~SecureChannel();

  // Receiving.
  std::span<std::byte> read_buffer();
  void handle_read(TimePoint now, std::size_t bytes);
  void handle_eof();  // the peer closed its side: an error unless its close frame came first
  std::optional<ChannelEvent> poll_event();
  // From the next frame on, a frame whose chunk is above `max_frame_bytes`, or a message above
  // `max_message_bytes`, is an error (Error(resource)): config's limits until this is called.
  void limit_incoming(std::uint32_t max_frame_bytes, std::uint64_t max_message_bytes);

  // Sending.
  bool established() const { return sealer_ != nullptr; }
  void begin_message(TimePoint now, std::uint16_t type, std::uint64_t size);
  std::size_t chunk_capacity() const;  // 0 when no message is being written
  void write_chunk(std::span<const std::byte> chunk);
  void send_message(TimePoint now, std::uint16_t type,
                    std::span<const std::byte> bytes);  // begin + chunks
  void close(TimePoint now);
  std::span<const std::byte> poll_transmit() const;
  void handle_transmitted(TimePoint now, std::size_t bytes);
  std::size_t pending_transmit_bytes() const { return pending_bytes_; }
  // Buffer memory held for outgoing frames: queued, and sent ones kept for reuse while more are
  // queued (once nothing is, none above kFirstReadBytes is kept).
  std::size_t held_transmit_bytes() const;

  // Timers.
  TimePoint poll_timeout() const;
  void handle_timeout(TimePoint now);

  const PublicKey& peer_identity() const;
  const std::string& peer_name() const { return peer_name_; }
  bool closed_by_peer() const { return phase_ == Phase::closed_by_peer; }

 private:
  enum class Phase { handshake, header, body, closed_by_peer };
  struct OutFrame {
    std::vector<std::byte> bytes;  // capacity kept for reuse; `size` bytes are live
    std::size_t size = 0;
  };

  void flush_handshake(TimePoint now);
  void finish_handshake();
  void handle_header();
  void handle_body();
  void check_continues_message(const FrameHeader& header);
  OutFrame& append_frame(std::size_t bytes, TimePoint now);
  [[noreturn]] void fail_protocol(const std::string& what);

  ChannelConfig config_;
  std::string peer_name_;
  std::unique_ptr<Handshake> handshake_;
  std::unique_ptr<FrameSealer> sealer_;
  std::unique_ptr<FrameOpener> opener_;
  PublicKey peer_identity_{};
  TimePoint started_;

  // Receive side.
  Phase phase_ = Phase::handshake;
  std::vector<std::byte> in_;  // handshake message or frame body; capacity kept
  std::size_t in_needed_ = 0;  // bytes of the current unit
  std::size_t in_have_ = 0;
  std::array<std::byte, kFrameHeaderBytes> header_bytes_{};
  bool in_message_ = false;        // a message has begun and is not complete
  std::uint64_t in_received_ = 0;  // bytes of the current incoming message
  std::uint64_t in_size_ = 0;      // its size and type, as its first chunk stated them
  std::uint16_t in_type_ = 0;
  bool release_buffer_ = false;  // in_ is large and its message complete: free it on next read
  std::uint32_t in_max_frame_;   // limit_incoming()
  std::uint64_t in_max_message_;
  std::deque<ChannelEvent> events_;
  TimePoint last_receive_;

  // Send side.
  std::deque<OutFrame> out_;
  std::vector<OutFrame> spare_;
  std::size_t front_sent_ = 0;
  std::size_t pending_bytes_ = 0;
  std::uint16_t out_type_ = 0;
  std::uint64_t out_size_ = 0;
  std::uint64_t out_written_ = 0;
  bool out_message_ = false;
  bool out_closed_ = false;
  TimePoint last_transmit_progress_;
};

// Feeds bytes already in memory (tests, fuzzing, the simulator) through read_buffer() /
// handle_read(), handing every event to `on_event` before the next bytes go in.
template <typename OnEvent>
void deliver(SecureChannel& channel, TimePoint now, std::span<const std::byte> bytes,
             OnEvent&& on_event) {
  while (!bytes.empty()) {
    const auto target = channel.read_buffer();
    const std::size_t n = std::min(target.size(), bytes.size());
    std::copy_n(bytes.begin(), n, target.begin());
    bytes = bytes.subspan(n);
    channel.handle_read(now, n);
    while (auto event = channel.poll_event()) on_event(*event);
  }
}

}  // namespace loco::secure
