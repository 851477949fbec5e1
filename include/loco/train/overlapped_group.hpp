#pragma once
// A group whose blocking rounds may land while the next inner phase runs: DiLoCo over a swarm
// (diloco.hpp). A sibling of OuterGroup (strategy.hpp), whose run_round returns only once the
// round has landed.
//
// A round's mean comes back first; the strategy starts its next inner phase from the state the
// mean leads to, while the group, on its own thread, hashes that state (manifest(mean): it may
// only read the shared state), reports the hash and waits for the commit. The strategy lands the
// round when the outcome is in (outcome_in(), checked between steps) or at the next round at the
// latest: land() installs the state of the committed attempt's mean (a retry after the mean may
// average another group: its own mean then), or says skipped or replaced as run_round does.
//
//   start(Δ) ── mean() ── inner steps ... ── land(install) ── (the next round's Δ)
//                          └ the group: hash, round done, commit ┘
//
// One round at a time: land() before the next start().

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "loco/train/strategy.hpp"

namespace loco::train {

class OverlappedGroup {
 public:
  virtual ~OverlappedGroup() = default;
  // A buffer of `values` floats for the round's Δ, which start() then takes over as it is (no
  // copy of Δ is made): the caller neither reads nor writes it afterwards, and the group may write
  // the round's mean into it (the swarm's direct exchange does).
  virtual std::shared_ptr<std::vector<float>> update_buffer(std::size_t values) = 0;
  // Starts averaging `delta` (from update_buffer()) for `round`, with `claim` (RoundInput::claim).
  virtual void start(std::uint64_t round, std::shared_ptr<std::vector<float>> delta, float norm,
                     const PhaseClaim& claim,
                     std::function<proto::StateManifest(std::span<const float> mean)> manifest) = 0;
  // Waits for the round's first mean (held until land() returns); null: the round ended
  // without one (land() says how).
  virtual std::shared_ptr<const std::vector<float>> mean() = 0;
  // Would land() return without waiting for the network?
  virtual bool outcome_in() const = 0;
  // Waits for the round's outcome; committed: install(the committed attempt's mean) ran first.
  virtual RoundResult land(const std::function<void(std::span<const float> mean)>& install) = 0;
};

}  // namespace loco::train
