#pragma once
// What a simulated member does with its update (docs/SECURITY.md, "Members lie"): an honest one
// sends the pseudo-gradient its inner phase computed and its norm; a lying one sends something
// else, always declaring an honest-looking norm (or none), as an attacker with its own key would.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace loco::sim {

enum class Behaviour : std::uint8_t {
  honest,
  scaled,          // its update × 1000
  sign_flipped,    // −10 × its update
  random,          // Gaussian noise of ten times its update's norm
  stale,           // its first update, every round
  zero_then_huge,  // declares a norm of 0, sends its update × 10⁶
  accuser,         // an honest update, but names a member of its group as failed every attempt
  wrong_mean,      // an honest update, but the mean of its own segment negated (lying_member.hpp)
  relay_dropper,   // an honest update, but as a relay it forwards nothing (peer_node.cpp)
  one_segment,     // an honest update but for its first value, 1000 × its norm: of the direct
                   // exchange's owners, only the one whose segment holds it (and its checker)
                   // sees it (unit_evidence.hpp)
  disputer,        // an honest update, but as a checker it signs a wrong result for the segment
                   // it checks, every attempt (lying_member.hpp)
  silent,          // joins and stays, but never says ready: a member that is live and never in a
                   // round (peer_node.cpp)
};

// "honest", "scaled", ...: the names the benchmark and the tests use.
std::string_view name(Behaviour b);
// Error(invalid_argument) naming the choices.
Behaviour parse_behaviour(std::string_view name);

// What a member with behaviour `b` sends instead of `update` (its honest pseudo-gradient of this
// phase; `first` its first one), and the norm it declares. Deterministic in `seed`.
struct Sent {
  std::vector<float> update;
  float declared_norm = 0;
};
Sent lie(Behaviour b, std::span<const float> update, std::span<const float> first,
         std::uint64_t seed);

}  // namespace loco::sim
