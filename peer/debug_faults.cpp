#include "debug_faults.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <thread>
#include <utility>

#include "loco/core/error.hpp"

namespace loco::peer {

void add_debug_fault_options(CLI::App& app, DebugFaultOptions& o) {
  app.add_option("--debug.die-at", o.die_at,
                 "For the test suite only: SIGKILL itself at PHASE:ROUND (inner, reduce-scatter, "
                 "all-gather, serve, relay, mean)")
      ->group("");  // hidden from --help
  app.add_option("--debug.stop-at", o.stop_at,
                 "For the test suite only: SIGSTOP itself once at PHASE:ROUND (as --debug.die-at)")
      ->group("");
  app.add_option("--debug.step-delay", o.step_delay_ms,
                 "For the test suite only: milliseconds added to each inner step")
      ->group("");
  app.add_option("--debug.step-slowdown", o.step_slowdown,
                 "For the test suite only: each inner step takes this many times its compute")
      ->check(CLI::Range(1.0, 1000.0))
      ->group("");
  app.add_flag("--debug.corrupt-shards", o.corrupt_shards,
               "For the test suite only: flip a bit of every dataset shard piece served to a peer")
      ->group("");
}

DebugFaults::DebugFaults(const DebugFaultOptions& o)
    : die_(parse("--debug.die-at", o.die_at)),
      stop_(parse("--debug.stop-at", o.stop_at)),
      step_delay_ms_(o.step_delay_ms),
      step_slowdown_(o.step_slowdown) {}

std::optional<DebugFaults::Point> DebugFaults::parse(const std::string& option,
                                                     const std::string& text) {
  if (text.empty()) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, Phase>, 6> kPhases{{
      {"inner", Phase::inner},
      {"reduce-scatter", Phase::reduce_scatter},
      {"all-gather", Phase::all_gather},
      {"serve", Phase::serve},
      {"relay", Phase::relay},
      {"mean", Phase::mean},
  }};
  std::optional<Point> point;
  const auto colon = text.find(':');
  const std::string_view name = std::string_view(text).substr(0, colon);
  for (const auto& [phase_name, phase] : kPhases)
    if (name == phase_name) point = Point{.phase = phase};
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no round");
    std::size_t used = 0;
    if (point) point->round = std::stoull(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    point.reset();
  }
  if (!point)
    throw Error(ErrorCategory::config,
                fmt::format("{} {}: PHASE:ROUND, PHASE one of inner, reduce-scatter, all-gather, "
                            "serve, relay, mean",
                            option, text));
  return point;
}

void DebugFaults::inner_step(std::uint64_t round, std::chrono::duration<double> compute) const {
  if (step_delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms_));
  if (step_slowdown_ > 1) std::this_thread::sleep_for((step_slowdown_ - 1) * compute);
  reach(Phase::inner, round);
}

std::function<void(swarm::FaultPoint, std::uint64_t)> DebugFaults::swarm_hook() const {
  const auto in_swarm = [](const std::optional<Point>& p) { return p && p->phase != Phase::inner; };
  if (!in_swarm(die_) && !in_swarm(stop_)) return {};
  return [this](swarm::FaultPoint point, std::uint64_t round) {
    switch (point) {
      case swarm::FaultPoint::reduce_scatter: reach(Phase::reduce_scatter, round); return;
      case swarm::FaultPoint::all_gather: reach(Phase::all_gather, round); return;
      case swarm::FaultPoint::serve: reach(Phase::serve, round); return;
      case swarm::FaultPoint::relay: reach(Phase::relay, round); return;
      case swarm::FaultPoint::mean: reach(Phase::mean, round); return;
    }
  };
}

void DebugFaults::reach(Phase phase, std::uint64_t round) const {
  const auto at = [&](const std::optional<Point>& p) {
    return p && p->phase == phase && round >= p->round;
  };
  if (at(stop_) && !stopped_.exchange(true)) {
    spdlog::warn("--debug.stop-at: stopping at round {}", round);
    spdlog::default_logger()->flush();
    ::raise(SIGSTOP);
  }
  if (!at(die_)) return;
  spdlog::warn("--debug.die-at: dying at round {}", round);
  spdlog::default_logger()->flush();
  ::raise(SIGKILL);
}

}  // namespace loco::peer
