#pragma once
// The Asio driver of the tracker's protocol core (proto/tracker_core.hpp): one authenticated
// bundle per peer from the listener, whole messages into the core, the core's transmits out, its
// timer on a steady_timer, and its state saved whenever it says so, before the messages that
// depend on it go out. Events are logged; a peer the core cuts off is closed once the replies
// queued for it are out (the rest is dropped).
//
// Saving: the state file is written on the loop, at once (a local disk). A replica's saves go to
// etcd on a StoreThread (store_thread.hpp) while the loop goes on reading peers and driving the
// core; what the core sends after a change waits in a HeldUntilSaved (held_until_saved.hpp) until
// a save that covers it is confirmed, and a failed save deposes the service with it unsent.
//
// One connection per identity: a peer that connects again replaces its old connection, and the
// core hears of a disconnect only when a peer's current connection ends.
// Cut off means cut off: a connection the core cuts off (a refused join, a peer removed for
// misbehaving) is detached at once, so nothing more it sends is read, and closed once the
// replies queued for it are out. A connection whose peer has not joined within
// `caps.join_deadline` is closed too. Warnings about a peer are logged in full once per period
// and summarised after it, other lines about it four times per period (log_tally.hpp), so one peer
// cannot fill the log.
// Memory by state: an admitted connection whose peer has not joined may make the tracker hold
// `caps.joining` bytes of partial messages, and send frames of at most that (plus the stripe
// header); once its peer has joined, `caps.member`. Memory freed by closed connections is handed
// back to the system (malloc_trim) at most once per kTrimInterval: glibc keeps freed heap memory
// otherwise, and a flood of connections that came and went would leave the RSS at its peak.
// Reachability: each probe the core asks for is dialled (reachability_probes.hpp) and its outcome
// handed back to the core.
// Sending: the core's transmits go to an outbox (send_queue.hpp), handed to the connections at
// most kTransmitsPerTurn per turn of the event loop: a broadcast to 10,000 members (each message
// encrypted for its connection) is spread over many turns, and the heartbeats that arrive meanwhile
// are read between them instead of after it. Heartbeat acks and join replies go first, in the
// outbox and in their connection's queue (StreamBundle::send_ahead); everything else is handed on
// only while under kSendBudgetBytes are in flight (handed to connections, not yet encrypted, for
// at most kSendHoldLimit), so a mass join's views go out a few megabytes at a time. A peer cut off
// is detached at once; the outbox drops what waits for it but its replies (SendQueue::drop), and
// its connection is closed once those are out (at once if none waits).
// Threads: everything on the io_context's thread, but a replica's saves (on its StoreThread).

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "buffer_caps.hpp"
#include "custody_store.hpp"
#include "held_until_saved.hpp"
#include "loco/net/bundle_listener.hpp"
#include "loco/net/message_assembler.hpp"
#include "loco/proto/tracker_core.hpp"
#include "log_tally.hpp"
#include "reachability_probes.hpp"
#include "send_queue.hpp"
#include "state_store.hpp"
#include "store_thread.hpp"

namespace loco::tracker {

class TrackerService {
 public:
  static constexpr Duration kTrimInterval = std::chrono::seconds(1);
  static constexpr Duration kRelayHold = std::chrono::seconds(30);
  static constexpr std::size_t kTransmitsPerTurn = 256;
  // Views, deltas and the rest in flight across all connections: ~64 frames of 64 KiB, a few
  // full views at 10,000 members, ~10 ms of encryption a turn of the loop on a core.
  static constexpr std::size_t kSendBudgetBytes = std::size_t{4} << 20;
  // How long a message handed on counts against that budget at most: a member that stops reading
  // must not hold it (send_queue.hpp).
  static constexpr Duration kSendHoldLimit = std::chrono::seconds(2);

  // `state` (null: not saved; state_store.hpp) receives the core's snapshot after every turn with
  // a state_changed event: on the loop, or on `store_thread` when one is given (it must outlive
  // the io_context's last run, and be destroyed before the io_context); `custody` (null: custody
  // copies kept in memory only) stores the copies the core pulls.
  TrackerService(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
                 net::BundleListenerConfig listener, std::unique_ptr<proto::TrackerCore> core,
                 std::unique_ptr<StateStore> state, std::unique_ptr<CustodyStore> custody,
                 BufferCaps caps = {}, StoreThread* store_thread = nullptr);

  void start();
  // A replica that no longer leads (replica.hpp): the core is driven no more, so no round is
  // formed and nothing more is sent (what waits for a save is dropped), and `on_deposed`
  // (set_on_deposed) runs once: the owner stop()s the service. Also done by the service itself
  // when a save is refused or unanswered.
  void depose();
  void set_on_deposed(std::function<void()> on_deposed) { on_deposed_ = std::move(on_deposed); }
  bool deposed() const { return deposed_; }
  // Stops accepting and closes every peer's connection (after its queued messages); `on_idle`
  // runs once none is left.
  void stop(std::function<void()> on_idle);
  boost::asio::ip::tcp::endpoint local_endpoint() const { return listener_->local_endpoint(); }
  proto::TrackerStatus status() const;
  const proto::TrackerCore& core() const { return *core_; }
  std::size_t connections() const { return peers_.size(); }

 private:
  struct Peer {
    std::shared_ptr<net::StreamBundle> bundle;
    net::MessageAssembler assembler;
    // What reached the core from this connection, for the line logged when it is cut off.
    TimePoint connected{};
    std::uint64_t messages = 0;
    TimePoint last_message{};
    std::uint64_t heartbeats = 0;
    TimePoint last_heartbeat{};
  };

  net::BundleHandlers admit(const std::shared_ptr<net::StreamBundle>& bundle,
                            const std::string& source);
  void on_ready(const std::shared_ptr<net::StreamBundle>& bundle, const std::string& source);
  void on_piece(const std::shared_ptr<net::StreamBundle>& bundle, const net::BundleChunk& piece);
  void on_closed(const std::shared_ptr<net::StreamBundle>& bundle, const Error* error);
  bool is_current(const std::shared_ptr<net::StreamBundle>& bundle) const;
  // Hands the core's outputs on: events (saved state first), then transmits, then closes.
  void drive();
  // Sets the timer to the core's deadline, unless it is already set to it.
  void arm_timer();
  // Hands up to kTransmitsPerTurn of the outbox on and, if more are left, continues in a later
  // turn of the event loop (or once the budget frees room); once it is empty, closes the
  // connections cut off meanwhile.
  void send_some();
  void send_later();
  // The connection a transmit to `key` goes on: one cut off but not yet closed first. Null: gone.
  std::shared_ptr<net::StreamBundle> connection_of(const proto::PeerKey& key) const;
  void log(const proto::TrackerEvent& event);
  // Detaches `key`'s connection (nothing more it sends is read), drops what the outbox holds for
  // it but its replies, and closes it once those are out; the core hears of the disconnect.
  void cut_off(const proto::PeerKey& key);
  // At debug level: what had reached the tracker from `peer`'s connection (see the definition).
  void log_cut_off(const Peer& peer) const;
  void arm_join_deadline();
  void close_late_joiners();
  // Starts saving `state` as `version` (HeldUntilSaved's start): at once, or on the store thread.
  void start_save(HeldUntilSaved::Version version, proto::TrackerSnapshot state);
  // A save's outcome, back on the loop: what it covers is sent, or the service is deposed.
  void on_saved(HeldUntilSaved::Version version, bool saved);
  // Stores a copy the core pulled and hands it back to the core to serve.
  void keep_custody(proto::CustodyCopy copy);
  // Narrows or widens what `key`'s connection may make us hold (BufferCaps).
  void limit(const proto::PeerKey& key, std::uint64_t cap);
  void widen_for_relay(const proto::PeerKey& key);
  void narrow_finished_relays();
  void trim_soon();

  boost::asio::io_context& io_;
  std::unique_ptr<proto::TrackerCore> core_;
  ReachabilityProbes probes_;
  std::shared_ptr<net::BundleListener> listener_;
  boost::asio::steady_timer timer_;
  TimePoint timer_deadline_ = kNever;  // what timer_ waits for (kNever: nothing)
  boost::asio::steady_timer trim_timer_;
  boost::asio::steady_timer join_timer_;
  boost::asio::steady_timer send_timer_;  // a hold's time runs out while the budget holds the rest
  bool join_armed_ = false;
  // Connections not yet joined, by the time they must have: (deadline, key, bundle).
  std::set<std::tuple<TimePoint, proto::PeerKey, std::shared_ptr<net::StreamBundle>>> joining_;
  LogTally warnings_;     // misbehaviour, refusals and reports: the first of a period per peer
  LogTally about_peers_;  // a peer's joins, leaves and notices: the first four of a period
  bool trim_armed_ = false;
  // Shared with a save under way on the store thread, which may end after the service.
  std::shared_ptr<StateStore> state_;
  StoreThread* store_thread_;  // null: saves on the loop
  std::unique_ptr<CustodyStore> custody_;
  BufferCaps caps_;
  std::map<proto::PeerKey, TimePoint> relaying_;  // peers in a custody exchange, until when
  std::map<proto::PeerKey, Peer> peers_;
  bool send_posted_ = false;
  // Cut off while the outbox held replies for them: closed once those are out.
  std::map<proto::PeerKey, std::shared_ptr<net::StreamBundle>> detached_;
  // After the connections: destroyed first, so a hold dropped by a connection's end later calls
  // nothing here.
  SendQueue outbox_;
  HeldUntilSaved held_;  // the core's transmits, into outbox_ once what they depend on is saved
  bool stopping_ = false;
  bool deposed_ = false;  // the core is driven no more
  std::function<void()> on_idle_;
  std::function<void()> on_deposed_;
};

}  // namespace loco::tracker
