#pragma once
// One all-gather per round, as DeMo (a round a step) and SparseLoCo (a round every H steps) ask
// for it: each member contributes one message (its DCT components, its sparse update: any size),
// every member gets every member's message, in the group's fixed member order, and computes the
// same next state from them. A sibling of OuterGroup
// (strategy.hpp), whose rounds average a float vector instead.
//
// The round mirrors OuterGroup's: the group gathers the contributions, calls tentative(parts)
// (the strategy computes the shared state they lead to, without installing it, and returns its
// manifest), and once the group has committed the round (every member computed the same state)
// calls install(). A member missing from the round is missing from `parts` on every member alike
// (the group agrees on who took part); a round that cannot complete is skipped: nothing is
// installed.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

struct GatherInput {
  std::uint64_t round = 0;
  std::span<const std::byte> contribution;  // read during run_gather only
  // Every contributing member's message, in member order (this member's among them).
  std::function<proto::StateManifest(std::span<const std::vector<std::byte>> parts)> tentative;
  std::function<void()> install;
};

class GatherGroup {
 public:
  virtual ~GatherGroup() = default;
  virtual RoundResult run_gather(const GatherInput& input) = 0;
};

}  // namespace loco::train
