#pragma once
// The responder's side of stream bundles (stream_bundle.hpp). Accepts TCP connections, runs each
// stream's handshake, reads its hello, and groups streams by (peer identity, bundle id). When a
// bundle has all its streams it adopts them into a StreamBundle and calls on_bundle, which returns
// the bundle's handlers; the streams are then welcomed and on_ready runs.
//
// Memory: a stream may send only its hello (a frame of kStreamHelloBytes) until its bundle is
// complete; then setup.config's frame and message limits apply, which the bundle's owner may
// narrow further (StreamBundle::limit_incoming).
// Bounds (listener_limits.hpp): a stream over a cap of its phase, in all or from its source, is
// closed at once (at accept: before any byte is read, so nobody is blamed by key). A handshake
// not done within `limits.handshake_timeout` of accept fails (the channel's own handshake
// deadline), and a stream that is not part of a complete bundle within `limits.bundle_timeout`
// (no hello, or sibling streams that never came) is closed together with its group; so is every
// stream of a group in which one stream breaks the protocol (a malformed hello, a duplicate
// index, a shape that disagrees) or closes. A stream closed by the listener ends as soon as its
// close frame is out (Connection::close_without_waiting), and one refused for lack of room is told
// so first (a stream refusal: "full: already 4096 streams admitted"). A stream holds its place in
// the budget until its connection has ended, or, once admitted, until its bundle has ended.
// Refusals, and failures of streams not yet admitted (bad handshakes, timeouts), are logged
// through a RefusalTally: the first of each 10 s in full, then one summary line per source. When
// accept fails (out of file descriptors) the listener waits kAcceptBackoff before it tries again.
//
// Threads: every call, and every callback, on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>

#include "loco/net/listener_limits.hpp"
#include "loco/net/refusal_tally.hpp"
#include "loco/net/source_budget.hpp"
#include "loco/net/stream_bundle.hpp"

namespace loco::net {

struct BundleListenerConfig {
  ChannelSetup setup;  // peer_label is ignored: each stream is named by its remote address;
                       // config.handshake_timeout is replaced by limits.handshake_timeout
  ListenerLimits limits = ListenerLimits::peer_defaults();
  std::uint32_t max_streams = kMaxStreams;  // per bundle; a hello asking for more is refused
  std::shared_ptr<LinkShaper> link;         // may be null: no link emulation
  // Each stream's Connection::set_send_window.
  std::size_t send_window_bytes = Connection::kSendWindowBytes;
};

class BundleListener : public std::enable_shared_from_this<BundleListener> {
 public:
  static constexpr Duration kAcceptBackoff = std::chrono::milliseconds(100);

  // An admitted bundle, and the network its streams come from (source_of: an IPv4 address, an
  // IPv6 /64).
  using OnBundle = std::function<BundleHandlers(const std::shared_ptr<StreamBundle>& bundle,
                                                const std::string& source)>;

  // Binds `endpoint` (port 0: any free port); throws Error(io) if it cannot, Error(config) for
  // limits that validate() refuses.
  static std::shared_ptr<BundleListener> create(boost::asio::io_context& io,
                                                const boost::asio::ip::tcp::endpoint& endpoint,
                                                BundleListenerConfig config, OnBundle on_bundle);

  void start();
  // Stops accepting, closes the streams still waiting for their bundle, and logs the refusals not
  // yet summarised.
  void stop();
  boost::asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }
  std::size_t pending_streams() const { return pending_.size(); }
  // Streams in each phase, per source: for tests and status.
  const SourceBudget& budget() const { return *budget_; }

  struct Private;  // constructor key: create() only
  BundleListener(Private, boost::asio::ip::tcp::acceptor acceptor, BundleListenerConfig config,
                 OnBundle on_bundle);

 private:
  using StreamId = std::uint64_t;
  using GroupKey = std::pair<std::array<std::uint8_t, 32>, BundleId>;

  struct PendingStream {
    std::shared_ptr<Connection> connection;
    std::shared_ptr<StreamRoute> route;
    std::unique_ptr<boost::asio::steady_timer> deadline;
    std::shared_ptr<StreamSlot> slot;
    std::optional<GroupKey> group;  // once its hello has arrived
  };
  struct PendingGroup {
    StreamHello shape;
    std::vector<StreamId> slots;  // by stream index; kNoStream where none yet
    std::uint32_t filled = 0;
  };
  static constexpr StreamId kNoStream = 0;

  void accept_next();
  void on_accepted(boost::asio::ip::tcp::socket socket);
  // The handshake table is full: closes the oldest handshake of the source holding the most, so
  // that a newcomer gets in. Holding every slot then costs an attacker a new connection per honest
  // handshake rather than one per deadline, and a source with few streams in their handshake (a
  // member reconnecting) loses one only when every source holds as few.
  void evict_a_handshake();
  void on_established(StreamId id);
  void on_hello(StreamId id, const secure::ChannelEvent& chunk);
  void refuse(StreamId id, const Error& error);
  void note_refusal(const std::string& source, std::string_view reason, const std::string& line);
  void flush_refusals();
  // Closes the stream's group without waiting for the peers' close frames; `tell`: the reason
  // sent first to each stream past its handshake (a stream refusal, stream_hello.hpp).
  void close_group_of(StreamId id, const std::optional<std::string>& tell = std::nullopt);
  void adopt(const GroupKey& key);

  boost::asio::ip::tcp::acceptor acceptor_;
  BundleListenerConfig config_;
  OnBundle on_bundle_;
  std::map<StreamId, PendingStream> pending_;
  std::map<GroupKey, PendingGroup> groups_;
  std::shared_ptr<SourceBudget> budget_;  // shared with every StreamSlot
  RefusalTally refusals_;
  boost::asio::steady_timer refusal_timer_;
  boost::asio::steady_timer backoff_timer_;
  StreamId next_id_ = 1;
  bool stopped_ = false;
};

}  // namespace loco::net
