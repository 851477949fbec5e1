#pragma once
// The Asio driver of the tracker's protocol core (proto/tracker_core.hpp): one authenticated
// bundle per peer from the listener, whole messages into the core, the core's transmits out, its
// timer on a steady_timer, and its state saved to disk whenever it says so, before the messages
// that depend on it go out. Events are logged; a peer the core cuts off is closed once the
// messages queued for it are out.
//
// One connection per identity: a peer that connects again replaces its old connection, and the
// core hears of a disconnect only when a peer's current connection ends.
// Threads: everything on the io_context's thread.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "custody_store.hpp"
#include "loco/net/bundle_listener.hpp"
#include "loco/net/message_assembler.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::tracker {

class TrackerService {
 public:
  // `state_file` (empty: not saved) receives the core's snapshot on every state_changed event;
  // `custody` (null: custody copies kept in memory only) stores the copies the core pulls.
  TrackerService(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
                 net::BundleListenerConfig listener, std::unique_ptr<proto::TrackerCore> core,
                 std::filesystem::path state_file, std::unique_ptr<CustodyStore> custody);

  void start();
  // Stops accepting and closes every peer's connection (after its queued messages); `on_idle`
  // runs once none is left.
  void stop(std::function<void()> on_idle);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return listener_->local_endpoint(); }
  proto::TrackerStatus status() const;
  std::size_t connections() const { return peers_.size(); }

 private:
  struct Peer {
    std::shared_ptr<net::StreamBundle> bundle;
    net::MessageAssembler assembler;
  };

  net::BundleHandlers admit(const std::shared_ptr<net::StreamBundle>& bundle);
  void on_ready(const std::shared_ptr<net::StreamBundle>& bundle);
  void on_piece(const std::shared_ptr<net::StreamBundle>& bundle, const net::BundleChunk& piece);
  void on_closed(const std::shared_ptr<net::StreamBundle>& bundle, const Error* error);
  bool is_current(const std::shared_ptr<net::StreamBundle>& bundle) const;
  // Hands the core's outputs on: events (saved state first), then transmits, then closes.
  void drive();
  void log(const proto::TrackerEvent& event) const;
  void save();
  // Stores a copy the core pulled and hands it back to the core to serve.
  void keep_custody(proto::CustodyCopy copy);

  boost::asio::io_context& io_;
  std::unique_ptr<proto::TrackerCore> core_;
  std::shared_ptr<net::BundleListener> listener_;
  boost::asio::steady_timer timer_;
  std::filesystem::path state_file_;
  std::unique_ptr<CustodyStore> custody_;
  std::map<proto::PeerKey, Peer> peers_;
  bool stopping_ = false;
  std::function<void()> on_idle_;
};

}  // namespace loco::tracker
