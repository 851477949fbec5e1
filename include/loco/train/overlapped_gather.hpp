#pragma once
// A gather group whose rounds run while the next step computes: DeMo with its delayed apply
// (demo.hpp, `demo-late`) over the swarm. A sibling of GatherGroup (gather_group.hpp), whose
// run_gather returns only once the round has landed.
//
// The strategy hands over its message and returns to compute; the group, on its own thread,
// gathers every member's message, calls tentative(parts) as soon as they are in (again with a
// retry's parts), reports the state's hash and waits for the commit. The strategy lands the round
// before its next one: land() installs the committed state, or says skipped or replaced as
// run_gather does.
//
//   start(message) ── step t + 1's forward and backward ── land(install) ── start(next message)
//    └ the group: all-gather, tentative(parts), round done, commit ┘
//
// One round at a time: land() before the next start().

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "loco/proto/state_manifest.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

struct GatherStart {
  std::uint64_t round = 0;
  std::vector<std::byte> contribution;
  // Runs on the group's thread, while the strategy's own thread computes the next step: it may
  // read only what the strategy leaves alone until land() (the shared state, and the tentative
  // state it writes). Every contributing member's message, in member order.
  std::function<proto::StateManifest(std::span<const std::vector<std::byte>> parts)> tentative;
  // The bytes of the state tentative() computed, served to newcomers from the commit on (the
  // members' own shared state is a round behind until they land it).
  std::function<proto::StateBytes()> bytes;
};

class OverlappedGather {
 public:
  virtual ~OverlappedGather() = default;
  virtual void start_gather(GatherStart input) = 0;
  // Waits for the round's outcome; committed: install() ran first.
  virtual RoundResult land_gather(const std::function<void()>& install) = 0;
};

}  // namespace loco::train
