#pragma once
// Keeps a peer connected to its tracker and drives the peer's TrackerClient over it: connects (a
// one-stream bundle, the tracker's key pinned), feeds it whole messages, sends what it queues,
// runs its timer, and hands its events to `on_event`. After a lost connection, a silent tracker or
// a malformed message it reconnects with a growing backoff (proto::Backoff::tracker_reconnect) and
// the client joins again. A run served by tracker replicas (docs/TRACKER.md, "Running replicas")
// gives several addresses: each reconnect goes to the next one in turn (a follower does not
// listen, so its attempt fails at once), and the backoff grows only after a whole pass over the
// list and to at most a second, so a peer finds the new leader a short pause after it listens
// (proto::TrackerAddresses, the walk the simulator's peers take too). An
// attempt that fails before its handshake completes is told to the client by how far it got
// (proto::ConnectFailure: no TCP connection, a handshake the tracker cut, a key not the pinned one,
// a handshake not answered in time, a tracker that closed after it), which may then refuse the
// join; a refused join is the owner's to act on (stop, usually).
//
// The owner calls the client's methods (ready(), round_done(), ...) and then flush().
// Threads: every call, and every callback, on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <vector>

#include "loco/net/message_assembler.hpp"
#include "loco/net/stream_bundle.hpp"
#include "loco/proto/tracker_addresses.hpp"
#include "loco/proto/tracker_client.hpp"

namespace loco::net {

class TrackerLink : public std::enable_shared_from_this<TrackerLink> {
 public:
  using OnEvent = std::function<void(const proto::ClientEvent& event)>;

  // `client` (and setup.identity) must outlive the link; `setup.accept` pins the tracker's key
  // (replicas share one). `trackers`: at least one; the first is tried first; the client's
  // config has `addresses` = their count, so that it judges failed attempts by whole passes.
  static std::shared_ptr<TrackerLink> create(boost::asio::io_context& io,
                                             std::vector<boost::asio::ip::tcp::endpoint> trackers,
                                             ChannelSetup setup, proto::TrackerClient& client,
                                             OnEvent on_event);

  void start();
  // Sends what the client has queued (leave(), say), then closes; no reconnect after this.
  void stop();
  // Sends what the owner's calls on the client queued.
  void flush();
  bool connected() const { return bundle_ != nullptr && bundle_->ready(); }

  struct Private;
  TrackerLink(Private, boost::asio::io_context& io,
              std::vector<boost::asio::ip::tcp::endpoint> trackers, ChannelSetup setup,
              proto::TrackerClient& client, OnEvent on_event);

 private:
  void connect();
  void on_ready();
  void on_piece(const BundleChunk& piece);
  void on_closed(const Error* error);
  void drop(const std::string& why);
  void reconnect_later(const std::string& why);
  void drive();
  void arm_timer();

  boost::asio::io_context& io_;
  std::vector<boost::asio::ip::tcp::endpoint> trackers_;
  ChannelSetup setup_;
  proto::TrackerClient& client_;
  OnEvent on_event_;
  std::shared_ptr<StreamBundle> bundle_;
  MessageAssembler assembler_;
  boost::asio::steady_timer timer_;      // the client's deadline
  boost::asio::steady_timer reconnect_;  // the backoff
  proto::TrackerAddresses addresses_;    // which of trackers_ next, and when
  bool stopped_ = false;
};

}  // namespace loco::net
