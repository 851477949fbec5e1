#pragma once
// An outer group whose rounds run beside the inner loop (Streaming DiLoCo, eager updates): the
// strategy hands a fragment's pseudo-gradient over and keeps stepping; some inner steps later it
// asks for the mean. A sibling of OuterGroup (strategy.hpp), whose run_round blocks.
//
// Call order, the same on every member: start_round for rounds in one agreed sequence (every
// member starts the same fragments in the same order), finish_round for each handle once, in any
// order after its start_round. Every member gets the same bits from finish_round.

#include <cstddef>
#include <cstdint>
#include <span>

namespace loco::train {

class AsyncOuterGroup {
 public:
  using Handle = std::uint64_t;

  virtual ~AsyncOuterGroup() = default;
  // Members of the group (the M of the eager proxy, DESIGN.md §1.3).
  virtual std::size_t members() const = 0;
  // Starts averaging `delta` (fragment `fragment`'s Δ) with the other members'; returns at once.
  // The group copies or encodes `delta` before returning.
  virtual Handle start_round(std::size_t fragment, std::span<const float> delta) = 0;
  // Waits for that round and writes the mean of every member's Δ to `mean` (delta's size).
  virtual void finish_round(Handle handle, std::span<float> mean) = 0;
};

}  // namespace loco::train
