#pragma once
// The strategies a run config can name ([strategy] kind), one row each: the name, the checks of
// its options, its run settings and checkpoint identity, its final round, the group its rounds
// take, whether a swarm and a trainer peer run it, its log line and its factory. Every rule that
// depends on the kind reads the row; the names are written in strategy_kinds.cpp and nowhere else.
// Adding a strategy is a row there and its own make_<name> file (make_diloco.hpp is one).

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/time.hpp"

namespace loco::proto {
struct Setting;
}

namespace loco::train {

struct TrainConfig;
struct StrategySection;
class Strategy;
class InnerLoop;
class OuterGroup;
class AsyncOuterGroup;
class GatherGroup;
class OverlappedGroup;
class OverlappedGather;

enum class StrategyKind : std::uint8_t { none, diloco, ddp, streaming, demo, sparseloco };

// The group a strategy's rounds take (make_strategy's arguments).
enum class RoundGroup : std::uint8_t {
  none,          // no rounds: local training
  all_reduce,    // OuterGroup: each round a blocking mean (DiLoCo, DDP)
  asynchronous,  // AsyncOuterGroup: fragments' means in flight while the steps go on (Streaming)
  all_gather,    // GatherGroup: each member's part to every member (DeMo, SparseLoCo)
};

// What make_strategy is handed: the groups (all outlive the strategy; a row reads the one of its
// RoundGroup, checked non-null first) and the clock of DiLoCo's rounds bounded by time.
struct StrategyGroups {
  OuterGroup& group;
  AsyncOuterGroup* async = nullptr;
  GatherGroup* gather = nullptr;
  OverlappedGroup* overlapped = nullptr;
  std::function<TimePoint()> clock;
  OverlappedGather* overlapped_gather = nullptr;
};

struct StrategyRow {
  StrategyKind kind;
  std::string_view name;  // [strategy] kind
  RoundGroup group;
  bool over_swarm;        // loco-peer and the simulator's strategy peers run it
  bool trainer_peer;      // a trainer peer (host/trainer_peer.hpp) runs it
  bool steps_with_adamw;  // the inner loop steps with AdamW (DeMo steps θ itself)
  // It takes DiLoCo's round options: round-seconds, tracker-paced and gossip-group.
  bool diloco_round_options;
  // The round begun at the last step lands in finish() (DiLoCo's overlapped round, DeMo's delayed
  // apply) rather than staying on the wire as Streaming's does (run_end.hpp, more_to_train).
  bool begun_round_lands;
  // Throws Error(config) naming the first bad option of the strategy's own.
  void (*validate)(const TrainConfig& config);
  // The codec when strategy.codec is empty.
  std::string (*default_codec)(const StrategySection& s);
  // The codec of a round's contributions over a swarm.
  std::string (*round_codec)(const StrategySection& s);
  // The run settings after strategy.kind (train/run_settings.hpp), in their order.
  void (*settings)(const TrainConfig& config, std::vector<proto::Setting>& out);
  // The checkpoint identity's lines after strategy.kind (TrainConfig::identity).
  std::string (*identity)(const StrategySection& s);
  // The run's final round (run_end.hpp); 0: none.
  std::uint64_t (*final_round)(const TrainConfig& config);
  // The names of its shared arenas (genesis.hpp).
  std::vector<std::string> (*shared_names)(const TrainConfig& config);
  // One line for logs (make_strategy.hpp, describe_strategy).
  std::string (*describe)(const StrategySection& s);
  // Throws Error(config), naming `source`, for what it cannot do over a swarm (over_swarm rows).
  void (*swarm_check)(const StrategySection& s, const std::string& source);
  // The strategy, over the group of `group` (non-null).
  std::unique_ptr<Strategy> (*make)(const TrainConfig& config, InnerLoop& loop,
                                    const StrategyGroups& groups);
};

// Every row, in the order the error messages list them.
std::span<const StrategyRow> strategy_rows();
// The row named `kind`. Throws Error(config) listing the known kinds for any other.
const StrategyRow& strategy_row(std::string_view kind);
const StrategyRow& strategy_row(StrategyKind kind);
std::string_view strategy_name(StrategyKind kind);
// The names of the rows with `having` set (every row's: nullptr), each between `quote`s (none:
// '\0') and joined as "'a', 'b' or 'c'", for error messages and help texts.
std::string strategy_names(bool StrategyRow::*having, char quote);

}  // namespace loco::train
