#pragma once
// What the network thread of a peer tells its compute thread (swarm_group.hpp), through a
// Mailbox: a queue one thread fills and the other waits on.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/time.hpp"
#include "loco/proto/round_mean.hpp"
#include "loco/proto/state_manifest.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::round {

struct SwarmEvent {
  enum class Kind {
    joined,      // `reply`: the shard and the timers
    refused,     // this peer cannot join: `text`, `cause` (proto::ClientEvent::cause)
    must_fetch,  // the run's state is elsewhere: the network thread is fetching round `round`
    fetched,     // `state` holds the bytes of round `round`, hash `hash`, from `donors`
    mean,        // the collective of `round` attempt `attempt` finished: `mean` holds the
                 // all-reduce's average, `parts` the all-gather's parts
    reported,    // a round that came with a tentative: the network thread computed the state
                 // attempt `attempt`'s mean leads to (`hash`, `manifest`) and reported it
    committed,   // the tracker committed `round` with state `hash`
    aborted,     // attempt `attempt` of `round` failed; `retry`: another follows
    run_ended,   // the run's final round `round` is committed with `hash`; `kept`: the tracker
                 // holds a copy of it (Mailbox: kept apart from the queue, for wait_run_ended)
    kept,        // the run went back to the state this peer holds (`round`, `hash`), and no
                 // fetch was pending: the round under way ended (SwarmGroup waits on; the
                 // simulator's modelled peer trains on from it)
  };
  Kind kind{};
  std::string text{};
  ErrorCategory cause = ErrorCategory::config;  // with refused
  proto::JoinReply reply{};
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  Digest hash{};
  bool retry = false;
  bool kept = false;
  std::size_t members = 0;  // of the group, with `mean`
  double share = 0;         // this member's share of a weighted mean (proto::PeerEvent::share)
  Duration phase{};         // the next inner phase, with `mean` (proto::PeerEvent::phase)
  TimePoint told{};         // with `fetched`: when the fetch's resync arrived (PeerEvent::told)
  // Its own: a later attempt writes into no buffer the compute thread still reads (the ring's
  // working buffer comes back to its pool only when this lets it go).
  std::shared_ptr<const proto::RoundMean> mean{};
  std::shared_ptr<const proto::StateManifest> manifest{};              // with `reported`
  std::shared_ptr<const std::vector<std::vector<std::byte>>> parts{};  // in member order
  std::shared_ptr<const std::vector<std::byte>> state{};
  std::vector<secure::PublicKey> donors{};  // with `fetched`: whose chunks it holds
  std::vector<secure::PublicKey> group{};   // with `mean`: the members, in the group's order
};

class Mailbox {
 public:
  // Queues `event`; a `fetched` one replaces any fetched event still queued. A `run_ended` one
  // is not queued but kept for wait_run_ended(), so that no round's wait takes it for stale.
  void post(SwarmEvent event);
  // The next event; nothing after `timeout` (a hang guard for the caller to report).
  std::optional<SwarmEvent> wait(Duration timeout);
  // The run_ended event, once posted (it stays); nothing after `timeout`.
  std::optional<SwarmEvent> wait_run_ended(Duration timeout);
  // Is an event `which` accepts waiting (not taken yet)?
  bool holds(const std::function<bool(const SwarmEvent&)>& which) const;
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<SwarmEvent> events_;
  std::optional<SwarmEvent> run_ended_;
};

}  // namespace loco::round
