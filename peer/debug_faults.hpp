#pragma once
// Faults loco-peer can be told to suffer, for the test suite only (hidden from --help):
//   --debug.die-at PHASE:ROUND  the process kills itself (SIGKILL: no leave, no checkpoint, its
//                               sockets closed by the kernel) the first time it reaches PHASE at
//                               round ROUND or later. PHASE: inner (an inner step of the round),
//                               reduce-scatter or all-gather (the first ring chunk of that phase it
//                               receives), serve (the first state request it gets as a donor),
//                               relay (the first relayed message it gets, as a relay or an end),
//                               mean (a round's mean is in, before the peer reports its state).
//   --debug.stop-at PHASE:ROUND the process stops itself (SIGSTOP) there, once: the test sends
//                               SIGCONT. A peer frozen with its round's mean in, say, is evicted
//                               and the round commits without it; then it goes on from that mean.
//   --debug.step-delay MS       each inner step takes MS milliseconds longer (slow rounds).
//   --debug.step-slowdown F     each inner step takes F times its compute (a machine F times
//                               slower, whatever the load on this one).
//   --debug.corrupt-shards      every piece of a dataset shard it serves to a peer has a bit
//                               flipped (a liar's bytes: swarm/shard_service.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "loco/swarm/swarm_session.hpp"

namespace CLI {
class App;
}

namespace loco::peer {

struct DebugFaultOptions {
  std::string die_at;   // "": never
  std::string stop_at;  // "": never
  std::uint32_t step_delay_ms = 0;
  double step_slowdown = 1;
  bool corrupt_shards = false;
};

void add_debug_fault_options(CLI::App& app, DebugFaultOptions& options);

class DebugFaults {
 public:
  // Throws Error(config) for a malformed --debug.die-at or --debug.stop-at.
  explicit DebugFaults(const DebugFaultOptions& options);

  // After each inner step of round `round` (the round the step leads to), whose compute took
  // `compute`.
  void inner_step(std::uint64_t round, std::chrono::duration<double> compute) const;
  // For SwarmConfig::fault_point; empty when no swarm fault is asked for.
  std::function<void(swarm::FaultPoint, std::uint64_t)> swarm_hook() const;

 private:
  enum class Phase { inner, reduce_scatter, all_gather, serve, relay, mean };
  struct Point {
    Phase phase{};
    std::uint64_t round = 0;
  };
  // PHASE:ROUND of `option` (its name, for the error), nothing when `text` is empty.
  static std::optional<Point> parse(const std::string& option, const std::string& text);
  void reach(Phase phase, std::uint64_t round) const;

  std::optional<Point> die_;
  std::optional<Point> stop_;
  mutable std::atomic<bool> stopped_{false};  // stop_ was reached (from either thread)
  std::uint32_t step_delay_ms_ = 0;
  double step_slowdown_ = 1;
};

}  // namespace loco::peer
