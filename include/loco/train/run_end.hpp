#pragma once
// Where a swarm run ends: the last round its config declares (docs/TRACKER.md, "The end of a
// run"). A peer trains train.steps inner steps; the round its shared state is at after them, when
// every round committed, is the run's final round. The tracker forms no round after it and takes
// custody of its state; a peer that starts later fetches that state and trains no more.

#include <cstdint>

#include "loco/train/train_config.hpp"

namespace loco::train {

// DiLoCo: ⌊steps / H⌋ (the steps after the last round are local); DDP and DeMo: steps (a round a
// step); Streaming DiLoCo: the last round that lands by step `steps` (one sent later would still
// be on the wire when the peers stop). 0: the run declares no end (gossip mode, which commits
// nothing, or no strategy).
std::uint64_t final_round(const TrainConfig& config);

// Whether a peer trains another step: below train.steps steps, or below the run's final round
// (`final_round`, the tracker's; 0: none), which a member whose rounds were given up reaches after
// train.steps (a round given up keeps its number); with rounds bounded by time
// (strategy.round-seconds), whose members take different numbers of steps, below the run's final
// round only (0: this config's; in gossip mode, which has none, train.steps / diloco-h rounds of
// the peer's own). So every member stops with the run, at its final round. `round` is the round
// its shared state is at, `begun` the round it has begun and not landed (0: none), which counts as
// held where it lands after the last step (DiLoCo's overlapped round, DeMo's delayed apply), not
// for Streaming, whose round in flight at the end stays on the wire.
bool more_to_train(const TrainConfig& config, std::uint64_t steps, std::uint64_t round,
                   std::uint64_t begun, std::uint64_t final_round);

}  // namespace loco::train
