#pragma once
// Several parallel TCP streams to one peer, used as one connection. On a real WAN one TCP flow is
// held to its window / round-trip time whatever the link's bandwidth (a 4 MiB window over 80 ms
// is 420 Mbit/s, and each loss halves it for a while), so a long, fat link is filled by several
// flows. Each stream is a full net::Connection with its own handshake and keys; messages are
// striped across them (stripe_layout.hpp) and put back together by offset
// (stripe_assembler.hpp). The link emulation models the per-flow limit with
// `[link] stream-window` (docs/LINK_EMULATION.md).
//
// Setting up (stream_hello.hpp): the initiator (connect()) opens N TCP connections and, after each
// handshake, sends a hello {bundle id, index, N, unit}; the responder (bundle_listener.hpp) groups
// streams by (peer identity, bundle id) and, once all N are there, answers each with a welcome and
// hands the bundle to its owner. The initiator is ready when every stream has been welcomed. A
// stream that authenticates as a different identity than stream 0 fails the bundle. With N = 1
// a bundle is one connection plus a 24-byte hello each way.
//
// Using: send() only after on_ready; its bytes stay alive until on_sent, which runs once every
// stream has taken its stripe. on_chunk gets the pieces of incoming messages by offset, in no
// particular order within a message, each byte exactly once; messages complete in the order they
// were sent (BundleChunk::completes_message). On the initiator, chunks may come before on_ready
// (the responder may send as soon as it has welcomed every stream).
// Ending: close() closes every stream after its queued messages. on_closed runs exactly once:
// nullptr when every stream ended cleanly and no message was left half received, else the first
// error: one stream's failure breaks the bundle, and the others are then closed. Dropping the last
// shared_ptr closes the streams too (without callbacks).
// Threads: every call on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/net/connection.hpp"
#include "loco/net/link_shaper.hpp"
#include "loco/net/stream_hello.hpp"
#include "loco/net/stripe_assembler.hpp"

namespace loco::net {

struct BundleConfig {
  std::uint32_t streams = 1;
  std::uint32_t unit_bytes = 256 << 10;  // stripe unit (stripe_layout.hpp)
};

// What each stream's SecureChannel is made of.
struct ChannelSetup {
  const secure::KeyPair* identity = nullptr;  // must outlive every connection made from it
  secure::ChannelConfig config;
  secure::AcceptIdentity accept;
  std::string peer_label;  // for logs until the peer's identity is known, e.g. its address
};

struct BundleHandlers {
  std::function<void()> on_ready;
  std::function<void(const BundleChunk& piece)> on_chunk;
  std::function<void(const Error* error)> on_closed;  // nullptr: a clean close
};

class StreamBundle;

// Where one stream's connection events go: to its bundle once adopted by one, before that to
// `before_adoption` (the listener, which is waiting for the stream's hello). The connection's
// handlers own the route; the route holds its bundle weakly, so a bundle is not kept alive by
// its own streams.
struct StreamRoute {
  std::uint32_t index = 0;
  bool adopted = false;
  std::weak_ptr<StreamBundle> bundle;
  ConnectionHandlers before_adoption;
  std::array<std::byte, kStreamHelloBytes> hello{};  // sent on this stream; lives as long as it
};

ConnectionHandlers route_handlers(const std::shared_ptr<StreamRoute>& route);

class StreamBundle : public std::enable_shared_from_this<StreamBundle> {
 public:
  // Initiator: opens config.streams connections to `peer`. Throws Error(invalid_argument) for a
  // bad shape (validate_bundle_shape); every later failure reaches on_closed. `link` (may be
  // null) gives each stream its pacer.
  static std::shared_ptr<StreamBundle> connect(boost::asio::io_context& io,
                                               const boost::asio::ip::tcp::endpoint& peer,
                                               const BundleConfig& config, ChannelSetup setup,
                                               BundleHandlers handlers,
                                               std::shared_ptr<LinkShaper> link = nullptr);

  // Responder (used by BundleListener): takes over established streams whose hellos agreed,
  // stream i at index i. Nothing is sent until start_responder().
  static std::shared_ptr<StreamBundle> adopt(std::vector<std::shared_ptr<Connection>> streams,
                                             std::vector<std::shared_ptr<StreamRoute>> routes,
                                             const StreamHello& shape,
                                             std::uint64_t max_message_bytes);
  // Welcomes every stream, then on_ready.
  void start_responder(BundleHandlers handlers);

  // False (nothing queued) once the bundle is closing or has ended.
  bool send(std::uint16_t type, std::span<const std::byte> bytes,
            std::function<void()> on_sent = {});
  // A bundle of one stream: ahead of the messages queued and not begun (Connection::send_ahead).
  // With several, like send(): the k-th message on each stream must be a stripe of the bundle's
  // k-th, and each stream may have begun a different one.
  bool send_ahead(std::uint16_t type, std::span<const std::byte> bytes,
                  std::function<void()> on_sent = {});
  void close();
  // What the peer may send on each stream from its next frame on, and the largest bundle message
  // (stripe headers included): a connection's owner narrows them as the connection's state
  // changes (the tracker: before and after a peer joined).
  void limit_incoming(std::uint32_t max_frame_bytes, std::uint64_t max_message_bytes);

  bool ready() const { return ready_; }
  // Initiator: how far the furthest stream got, which tells what a failure means (a refused
  // TCP connection, a handshake that did not complete, a refusal after it).
  enum class Progress { connecting, handshaking, authenticated };
  Progress progress() const { return progress_; }
  // The failure that ended the bundle was its peer ending a stream (Connection::cut_by_peer).
  bool cut_by_peer() const { return cut_by_peer_; }
  std::uint32_t stream_count() const { return shape_.count; }
  const secure::PublicKey& peer_identity() const;  // once ready
  const std::string& peer_name() const { return peer_name_; }
  // Every stream's reads together (Connection::read_counters; `last`: the latest), and the
  // encrypted bytes waiting for their sockets.
  Connection::ReadCounters read_counters() const;
  std::size_t queued_bytes() const;

  ~StreamBundle();

  struct Private;  // constructor key: connect() and adopt() only
  StreamBundle(Private, const StreamHello& shape, std::uint64_t max_message_bytes,
               std::string peer_name);

 private:
  friend ConnectionHandlers route_handlers(const std::shared_ptr<StreamRoute>& route);

  struct Stream {
    std::shared_ptr<Connection> connection;
    std::shared_ptr<StreamRoute> route;
    bool welcomed = false;  // the hello has been answered
    bool paused = false;
    bool ended = false;
  };

  // `ahead`: Connection::send_ahead on the one stream.
  bool queue(std::uint16_t type, std::span<const std::byte> bytes, std::function<void()> on_sent,
             bool ahead);
  void on_tcp_connected(std::uint32_t index, boost::asio::ip::tcp::socket socket,
                        const ChannelSetup& setup, LinkShaper* link);
  void on_stream_established(std::uint32_t index);
  void on_stream_chunk(std::uint32_t index, const secure::ChannelEvent& chunk);
  void on_welcome(std::uint32_t index, const secure::ChannelEvent& chunk);
  void on_stream_closed(std::uint32_t index, const Error* error);
  void resume_streams_caught_up();
  void maybe_finish();  // with a clean close once every stream has ended
  void fail(const Error& error);
  void finish(const Error* error);

  StreamHello shape_;
  std::string peer_name_;
  std::vector<Stream> streams_;
  StripeAssembler assembler_;
  BundleHandlers handlers_;
  bool initiator_ = false;
  bool ready_ = false;
  Progress progress_ = Progress::connecting;
  bool cut_by_peer_ = false;
  bool closing_ = false;
  bool finished_ = false;
};

}  // namespace loco::net
