#pragma once
// An outer group whose rounds run beside the inner loop (Streaming DiLoCo, eager updates): the
// strategy hands a fragment's pseudo-gradient over and keeps stepping; some inner steps later it
// asks for the mean. A sibling of OuterGroup (strategy.hpp), whose run_round blocks.
//
// Call order, the same on every member: start_round for rounds in one agreed sequence (every
// member starts the same fragments in the same order), finish_round for each handle once. A
// group over a network (round/swarm_async_group.hpp) numbers its rounds as the shared state's
// round + 1 and needs each round finished before the next starts; an in-process group
// (local_async_group.hpp) takes finish_round in any order after its start_round.
//
// A round lands as RoundInput's does for OuterGroup: the group calls tentative(mean) (the
// strategy computes the shared state the mean leads to, every member gets the same bits) and,
// once the group agrees on that state, install(). The landing is handed over with start_round:
// a group over a network calls tentative on its own thread as soon as the mean is in (again for
// each retry), so that the members agree while the inner loop steps; it must therefore only read
// the shared state, which the strategy leaves alone until finish_round. install() runs on the
// caller's thread, in finish_round, which returns committed (installed), skipped (the round could
// not complete: nothing changed, the strategy trains on) or replaced (the group put the run's
// state into the SharedState: the strategy restarts its local copy from it).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "loco/train/strategy.hpp"

namespace loco::train {

struct Landing {
  std::function<const SharedState&(std::span<const float> mean)> tentative;
  std::function<void()> install;
};

class AsyncOuterGroup {
 public:
  using Handle = std::uint64_t;

  virtual ~AsyncOuterGroup() = default;
  // Members of the group (the M of the eager proxy, docs/DESIGN.md §1.3).
  virtual std::size_t members() const = 0;
  // Starts averaging `delta` (fragment `fragment`'s Δ) with the other members'; returns at once.
  // The group copies or encodes `delta` before returning and keeps `landing` for the round.
  virtual Handle start_round(std::size_t fragment, std::span<const float> delta,
                             Landing landing) = 0;
  // Waits for that round (the mean of every member's Δ, delta's size) and lands it.
  virtual RoundResult finish_round(Handle handle) = 0;
};

}  // namespace loco::train
