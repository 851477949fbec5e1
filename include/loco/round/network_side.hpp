#pragma once
// Where a peer's network side runs, as its compute thread (swarm_group.hpp) sees it: a place to
// send commands to the peer's ComputeLink and a mailbox of events to wait on. Two of them:
//   - SwarmThread (swarm_thread.hpp): loco-peer's, an io_context thread running SwarmSession;
//   - sim::StrategyProcess::Side (sim/strategy_process.hpp): the simulator's, which runs the
//     compute thread in turns with the event loop, in virtual time.
// So a strategy's rounds run the same SwarmGroup code over a real network and a simulated one.

#include <functional>
#include <optional>
#include <string>

#include "loco/round/compute_link.hpp"
#include "loco/round/swarm_events.hpp"

namespace loco::round {

// Byte counts for the progress line, read from the compute thread.
struct TrafficCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> relayed{0};  // forwarded as a relay (proto/relay_core.hpp)
};

class NetworkSide {
 public:
  // A command runs on the network side, at the time it gives.
  using Command = std::function<void(ComputeLink& link, TimePoint now)>;

  virtual ~NetworkSide() = default;
  // Starts the protocol: joins the run holding the state of `round` with hash `hash`, in a run
  // whose round-0 state hashes to `genesis`. Before any post().
  virtual void start(const Digest& genesis, std::uint64_t round, const Digest& hash) = 0;
  // Runs `command` on the network side, after every command posted before it.
  virtual void post(Command command) = 0;
  // The next event; nothing after `timeout` (a hang guard for the caller to report), or soon
  // once the side has stopped.
  virtual std::optional<SwarmEvent> wait(Duration timeout) = 0;
  // The tracker's word that the run ended (Mailbox::wait_run_ended); nothing after `timeout`.
  virtual std::optional<SwarmEvent> wait_run_ended(Duration timeout) = 0;
  // Is an event `which` accepts waiting (not taken yet)? Polled between inner steps.
  virtual bool holds(const std::function<bool(const SwarmEvent&)>& which) const = 0;
  // Tells the tracker and stops. Once it returns, the network side reads nothing the compute
  // thread owns (the strategy's tentative state may be freed).
  virtual void leave(const std::string& reason) = 0;
  // Set at construction: any thread may ask.
  virtual bool gossip() const = 0;
  virtual SharedStateGuard& guard() = 0;
  virtual const TrafficCounters& traffic() const = 0;
};

}  // namespace loco::round
