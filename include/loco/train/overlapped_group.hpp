#pragma once
// A group whose blocking rounds may land while the next inner phase runs: DiLoCo over a swarm
// (diloco.hpp). A sibling of OuterGroup (strategy.hpp), whose run_round returns only once the
// round has landed.
//
// A round's mean comes back first; the strategy previews the state the mean leads to into its
// local copy and says so (previewed()), then starts its next inner phase from it, while the
// group, on its own thread, hashes that state (manifest(mean): it may only read the shared
// state), reports the hash and waits for the commit. The group starts the hash only once told
// previewed(): the preview is what the next phase waits for, and where the cores are fewer than
// the threads that want them (two peers on two cores), a hash beside it would halve its share
// (docs/SCALE.md, "Where the compute thread waits"). The strategy lands the round when the
// outcome is in (outcome_in(), checked between steps) or at the next round at the latest: land()
// installs the state of the committed attempt's mean (a retry after the mean may average another
// group: its own mean then), or says skipped or replaced as run_round does.
//
//   start(Δ) ── mean() ── preview ── previewed() ── inner steps ... ── land(install) ── (next Δ)
//                                     └ the group: hash, round done, commit ┘
//
// One round at a time: land() before the next start().
//
// The mean comes as a proto::RoundMean (the direct exchange's encoded chunks, or an fp32 vector):
// the strategy reads it chunk by chunk, so a round need not hold it in fp32.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "loco/proto/round_mean.hpp"
#include "loco/train/strategy.hpp"

namespace loco::train {

class OverlappedGroup {
 public:
  virtual ~OverlappedGroup() = default;
  // Starts averaging `delta` for `round`, with `claim` (RoundInput::claim). `delta` is lent, not
  // copied: the group reads it until mean() returns, and the caller leaves it alone until then
  // (DiLoCo's is in the inner loop's gradient arena, which the next backward overwrites). The
  // swarm's direct exchange encodes it once before the mean can come; a group that reads Δ in
  // fp32 longer (the ring, for its retries) copies it.
  virtual void start(
      std::uint64_t round, std::span<const float> delta, float norm, const PhaseClaim& claim,
      std::function<proto::StateManifest(const proto::RoundMean& mean)> manifest) = 0;
  // Waits for the round's first mean (held until land() returns); null: the round ended
  // without one (land() says how).
  virtual std::shared_ptr<const proto::RoundMean> mean() = 0;
  // After mean() returned one: the caller has what it needs from the mean, and the group may
  // hash the state it leads to. Until then the group leaves the cores to the caller (a later
  // attempt's mean, after a retry, is hashed at once).
  virtual void previewed() = 0;
  // Would land() return without waiting for the network?
  virtual bool outcome_in() const = 0;
  // Waits for the round's outcome; committed: install(the committed attempt's mean) ran first.
  virtual RoundResult land(const std::function<void(const proto::RoundMean& mean)>& install) = 0;
  // With no round started: the run's state this member was told to fetch (it was left out of a
  // round), once fetched, loaded into the shared state now and said as land() says replaced;
  // nullopt, without waiting, when there is none yet.
  virtual std::optional<RoundResult> take_replaced() { return std::nullopt; }
};

}  // namespace loco::train
