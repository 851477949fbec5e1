#pragma once
// A SparseLoCo strategy peer that lies (behaviour.hpp) in its all-gather: each round, the message
// its strategy contributes is decoded, changed as lie() changes a modelled member's update
// (scaled ×1000, sign-flipped ×−10, random, stale, ×10⁶) and encoded again in the run's format,
// so every member receives a well-formed message that says something else. It is a GatherGroup
// between the strategy and its SwarmGroup (strategy_process.hpp): the rest of the peer, its
// round's bookkeeping and its own error feedback (which removes what it meant to send) stay
// honest, as an attacker that only edits its outgoing bytes would have them.
//
// Behaviours that do not change an update (accuser, wrong_mean...) leave the message as it is.

#include <cstdint>
#include <memory>
#include <vector>

#include "loco/core/arena.hpp"
#include "loco/sim/behaviour.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/sparseloco_components.hpp"

namespace loco::sim {

class LyingGather final : public train::GatherGroup {
 public:
  // `inner` outlives this; `seed` makes the random lie deterministic (with the round).
  LyingGather(train::GatherGroup& inner, Behaviour behaviour,
              std::shared_ptr<const ArenaLayout> layout, const train::SparseLoCoConfig& config,
              std::uint64_t seed);

  train::RoundResult run_gather(const train::GatherInput& input) override;

 private:
  // What it sends instead of `honest` in round `round`.
  std::vector<std::byte> rewrite(std::span<const std::byte> honest, std::uint64_t round);

  train::GatherGroup& inner_;
  Behaviour behaviour_;
  std::uint64_t seed_;
  train::SparseLoCoComponents components_;
  Arena decoded_, zero_, error_, sent_;
  std::vector<float> first_;  // its first honest update, which a stale member replays
};

}  // namespace loco::sim
