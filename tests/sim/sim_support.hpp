#pragma once
// Shared by the simulator's tests: every test prints its seed, and a failure says how to replay.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "loco/sim/swarm.hpp"

namespace loco::sim::test {

inline std::string replay_hint(std::uint64_t seed, const std::string& filter) {
  return "seed " + std::to_string(seed) + "; replay: LOCO_SIM_SEED=" + std::to_string(seed) +
         " build/release/bin/loco_test_sim --gtest_filter='" + filter + "'";
}

// The seeds a randomised test runs: `n` from `first` on, LOCO_SIM_SEEDS=N of them instead, or the
// one LOCO_SIM_SEED names (to replay it).
inline std::vector<std::uint64_t> seeds(std::uint64_t first, std::uint64_t n) {
  if (const char* one = std::getenv("LOCO_SIM_SEED")) return {std::stoull(one)};
  if (const char* many = std::getenv("LOCO_SIM_SEEDS")) n = std::stoull(many);
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 0; s < n; ++s) out.push_back(first + s);
  return out;
}

inline void print_seed(std::uint64_t seed) {
  std::printf("[ SIM SEED ] %llu\n", static_cast<unsigned long long>(seed));
}

// A small, fast swarm: no latency, no bandwidth limit, free crypto, unless a test says otherwise.
inline SwarmConfig instant_swarm(std::uint64_t seed, std::size_t peers) {
  SwarmConfig c;
  c.seed = seed;
  c.peers = peers;
  c.links.latency_min = c.links.latency_max = Duration{0};
  c.links.bandwidth_min = c.links.bandwidth_max = link::kUnlimited;
  c.network.handshake_cost = Duration{0};
  c.network.crypto_bytes_per_s = 0;
  c.compute.dim = 256;
  c.compute.inner_steps = 10;
  c.step_time = std::chrono::milliseconds(100);
  c.check_holding = true;  // holding_check.hpp
  return c;
}

// Every live peer's state hash and round, to compare survivors.
inline std::map<std::size_t, std::pair<std::uint64_t, Digest>> live_states(const Swarm& swarm) {
  std::map<std::size_t, std::pair<std::uint64_t, Digest>> out;
  for (std::size_t i = 0; i < swarm.peer_count(); ++i)
    if (swarm.peer_up(i))
      out[i] = {swarm.peer(i).state().round, swarm.peer(i).state().manifest().state_hash()};
  return out;
}

// The tracker crashes at `t` (if it is up) and restarts from its disk `down` later.
inline void crash_tracker_at(Swarm& swarm, TimePoint t, Duration down) {
  swarm.loop().at(t, [&swarm] {
    if (swarm.tracker().up()) swarm.crash_tracker();
  });
  swarm.loop().at(t + down, [&swarm] {
    if (!swarm.tracker().up()) swarm.restart_tracker();
  });
}

inline std::string violations(const Swarm& swarm) {
  std::string out;
  for (const auto& v : const_cast<Swarm&>(swarm).ledger().violations()) out += "  " + v + "\n";
  return out;
}

}  // namespace loco::sim::test
