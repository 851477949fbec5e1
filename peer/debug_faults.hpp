#pragma once
// Faults loco-peer can be told to suffer, for the test suite only (hidden from --help):
//   --debug.die-at PHASE:ROUND  the process kills itself (SIGKILL: no leave, no checkpoint, its
//                               sockets closed by the kernel) the first time it reaches PHASE at
//                               round ROUND or later. PHASE: inner (an inner step of the round),
//                               reduce-scatter or all-gather (the first ring chunk of that phase it
//                               receives), serve (the first state request it gets as a donor),
//                               relay (the first relayed message it gets, as a relay or an end).
//   --debug.step-delay MS       each inner step takes MS milliseconds longer (slow rounds).
//   --debug.step-slowdown F     each inner step takes F times its compute (a machine F times
//                               slower, whatever the load on this one).

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
  std::string die_at;  // "": never
  std::uint32_t step_delay_ms = 0;
  double step_slowdown = 1;
};

void add_debug_fault_options(CLI::App& app, DebugFaultOptions& options);

class DebugFaults {
 public:
  // Throws Error(config) for a malformed --debug.die-at.
  explicit DebugFaults(const DebugFaultOptions& options);

  // After each inner step of round `round` (the round the step leads to), whose compute took
  // `compute`.
  void inner_step(std::uint64_t round, std::chrono::duration<double> compute) const;
  // For SwarmConfig::fault_point; empty when no swarm fault is asked for.
  std::function<void(swarm::FaultPoint, std::uint64_t)> swarm_hook() const;

 private:
  enum class Phase { inner, reduce_scatter, all_gather, serve, relay };
  void reach(Phase phase, std::uint64_t round) const;

  std::optional<Phase> phase_;
  std::uint64_t round_ = 0;
  std::uint32_t step_delay_ms_ = 0;
  double step_slowdown_ = 1;
};

}  // namespace loco::peer
