#pragma once
// The tracker's outbox (tracker_service.hpp): the core's transmits in, in the order they are to be
// handed to the connections out. Two rules, both for a tracker with thousands of members:
//
// - Replies first. A heartbeat ack or a join reply goes ahead of every other message still
//   waiting: an ack must not wait behind a broadcast to 10,000 members (measured: a 28 s median).
//   Neither says anything about the membership, so a peer may read them before a view or delta
//   sent earlier. Every other message keeps the core's order (a group or a commit names members
//   that the views before it listed; a resync follows the view its donors are in).
// - A budget on the bytes in flight. A message other than a reply is handed on only while the
//   bytes handed on and not yet taken by their connections (encrypted into frames) are under the
//   budget (one message always may be): a mass join's views and deltas (gigabytes at 10,000
//   members) go out a few megabytes at a time, so each turn of the event loop encrypts a few
//   frames, not thousands, and the heartbeats waiting in the sockets are read between turns.
//
// Sans-I/O: pop() gives the next message and, for one under the budget, a hold: its bytes are in
// flight until the last copy of the hold is dropped (the driver keeps it in the connection's
// on_sent callback, which the connection drops once it took the message, or when it ends, so a
// closed connection gives its bytes back too), or until `hold_limit` has passed, whichever comes
// first. The limit is what keeps a member that stops reading from freezing every broadcast: its
// connection never takes its view, and a handful of such members (a few full views at 10,000
// members, docs/SECURITY.md) would otherwise hold the whole budget until their connections time
// out, and again after each rejoin; with it they hold at most their share of hold_limit's worth
// of sending. Dropping a hold runs the on_release callback: more may be popped now (the driver
// only schedules that; it may run inside a connection's call). A hold that outlives its queue
// gives back nothing.
//
// A peer cut off needs none of the views, deltas and rounds still waiting for it: drop() removes
// them (replies stay: a refused join's reply is how the peer learns why), so its connection can be
// closed as soon as its replies are out instead of after a backlog of tens of thousands of
// messages to others. The order of what stays is untouched.

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "loco/core/time.hpp"
#include "loco/proto/tracker_core.hpp"

namespace loco::tracker {

class SendQueue {
 public:
  struct Out {
    proto::Transmit transmit;
    std::shared_ptr<const void> hold;  // null for a reply: not counted
  };

  // `budget_bytes` > 0, `hold_limit` > 0; `on_release` may be empty.
  SendQueue(std::size_t budget_bytes, Duration hold_limit, std::function<void()> on_release = {});

  // Replies (heartbeat acks, join replies) overtake everything else; nothing else overtakes.
  static bool is_reply(proto::MessageType type);

  void push(proto::Transmit transmit);
  // The next message to hand on at `now`, or none: the queue is empty, or only the budget holds
  // it.
  std::optional<Out> pop(TimePoint now);
  // Whether pop(now) would give a message.
  bool ready(TimePoint now);
  // When a hold still counted runs out while a message waits for the budget (kNever: none): the
  // driver tries again then.
  TimePoint next_expiry() const;
  bool empty() const { return replies_.empty() && ordered_.empty(); }
  std::size_t size() const { return replies_.size() + ordered_.size(); }
  // Drops every message but the replies waiting for `key`: a pass over the queue if any waits,
  // nothing otherwise.
  void drop(const proto::PeerKey& key);
  // Whether a message for `key` waits.
  bool holds(const proto::PeerKey& key) const { return waiting_.contains(key); }
  // Drops every waiting message (the holds handed out stay counted until dropped).
  void clear();
  std::size_t in_flight_bytes() const { return budget_->in_flight; }

 private:
  struct Budget {
    std::size_t limit;
    std::size_t in_flight = 0;
    std::function<void()> on_release;
  };
  struct Hold;
  struct Issued {
    TimePoint expires;
    std::weak_ptr<Hold> hold;
  };

  struct Waiting {
    std::size_t replies = 0;
    std::size_t ordered = 0;
  };

  // Stops counting the holds whose time is up.
  void expire(TimePoint now);
  // Takes the front of `from` (replies_ or ordered_) and forgets it in waiting_.
  proto::Transmit take_front(std::deque<proto::Transmit>& from);

  std::deque<proto::Transmit> replies_;
  std::deque<proto::Transmit> ordered_;
  std::map<proto::PeerKey, Waiting> waiting_;  // by recipient; only those with a message waiting
  std::shared_ptr<Budget> budget_;
  Duration hold_limit_;
  std::deque<Issued> issued_;  // in the order handed out: their expiries only grow
};

}  // namespace loco::tracker
