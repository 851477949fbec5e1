#pragma once
// The one place a strategy is built from the run's config (loco-train with a local group,
// loco-peer with the swarm), by the factory of its row in strategy_kinds.hpp.

#include <functional>
#include <memory>
#include <string>

#include "loco/core/time.hpp"
#include "loco/train/async_outer_group.hpp"
#include "loco/train/gather_group.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/overlapped_gather.hpp"
#include "loco/train/overlapped_group.hpp"
#include "loco/train/strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

// The strategy of config.strategy.kind over `group`, `async_group` for Streaming DiLoCo or
// `gather_group` for DeMo (all outlive it; the row's RoundGroup says which); DiLoCo's rounds
// overlap the next inner phase when `overlapped_group` is given (the swarm's). Throws Error(config)
// for an unknown kind, or when the group its rounds take is not given. DiLoCo's rounds bounded by
// time (strategy.round-seconds) read `clock` (the simulator's is its compute thread's virtual
// time). DeMo's delayed apply (strategy.demo-late) overlaps the next step when `overlapped_gather`
// is given (the swarm's).
std::unique_ptr<Strategy> make_strategy(const TrainConfig& config, InnerLoop& loop,
                                        OuterGroup& group, AsyncOuterGroup* async_group = nullptr,
                                        GatherGroup* gather_group = nullptr,
                                        OverlappedGroup* overlapped_group = nullptr,
                                        std::function<TimePoint()> clock = steady_now,
                                        OverlappedGather* overlapped_gather = nullptr);

// One line for logs and benchmark output, e.g. "diloco H=20 codec=int8:block=256".
std::string describe_strategy(const TrainConfig& config);

}  // namespace loco::train
