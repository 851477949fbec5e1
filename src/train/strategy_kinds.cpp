// The table of strategies (strategy_kinds.hpp): the only place their names are written.
#include "loco/train/strategy_kinds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "loco/core/error.hpp"
#include "loco/train/ddp.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/make_demo.hpp"
#include "loco/train/make_diloco.hpp"
#include "loco/train/make_sparseloco.hpp"
#include "loco/train/make_streaming.hpp"
#include "loco/train/no_strategy.hpp"
#include "loco/train/run_settings.hpp"
#include "loco/train/streaming_diloco.hpp"

namespace loco::train {
namespace {

// What most rows share.
void no_checks(const TrainConfig&) {}
void no_swarm_checks(const StrategySection&, const std::string&) {}
std::string no_identity(const StrategySection&) {
  return {};
}
std::string int8_codec(const StrategySection&) {
  return "int8:block=256";
}
std::string the_codec(const StrategySection& s) {
  return s.codec_spec();
}
std::uint64_t a_round_a_step(const TrainConfig& config) {
  return config.train.steps;
}

constexpr std::array kRows = {
    StrategyRow{.kind = StrategyKind::none,
                .name = "none",
                .group = RoundGroup::none,
                .over_swarm = false,
                .trainer_peer = false,
                .steps_with_adamw = true,
                .diloco_round_options = false,
                .begun_round_lands = true,
                .validate = no_checks,
                .default_codec = int8_codec,
                .round_codec = the_codec,
                .settings = [](const TrainConfig&, std::vector<proto::Setting>&) {},
                .identity = no_identity,
                .final_round = [](const TrainConfig&) -> std::uint64_t { return 0; },
                .shared_names = [](const TrainConfig&) -> std::vector<std::string> { return {}; },
                .describe = [](const StrategySection& s) { return s.kind; },
                .swarm_check = no_swarm_checks,
                .make = [](const TrainConfig&, InnerLoop&, const StrategyGroups&)
                    -> std::unique_ptr<Strategy> { return std::make_unique<NoStrategy>(); }},
    StrategyRow{.kind = StrategyKind::diloco,
                .name = "diloco",
                .group = RoundGroup::all_reduce,
                .over_swarm = true,
                .trainer_peer = true,
                .steps_with_adamw = true,
                .diloco_round_options = true,
                .begun_round_lands = true,
                .validate = validate_diloco,
                .default_codec = int8_codec,
                .round_codec = the_codec,
                .settings = add_diloco_settings,
                .identity = no_identity,
                .final_round = diloco_final_round,
                .shared_names = [](const TrainConfig&) { return DiLoCo::shared_names(); },
                .describe = describe_diloco,
                .swarm_check = no_swarm_checks,
                .make = make_diloco},
    StrategyRow{.kind = StrategyKind::ddp,
                .name = "ddp",
                .group = RoundGroup::all_reduce,
                .over_swarm = true,
                .trainer_peer = false,
                .steps_with_adamw = true,
                .diloco_round_options = false,
                .begun_round_lands = true,
                .validate = no_checks,
                .default_codec = [](const StrategySection&) -> std::string { return "fp32"; },
                .round_codec = the_codec,
                .settings =
                    [](const TrainConfig& config, std::vector<proto::Setting>& out) {
                      add_codec_setting(config, out);
                      add_all_reduce_setting(config, out);
                    },
                .identity = no_identity,
                .final_round = a_round_a_step,
                .shared_names = [](const TrainConfig&) { return DataParallel::shared_names(); },
                .describe =
                    [](const StrategySection& s) {
                      return fmt::format("{} codec={}", s.kind, s.codec_spec());
                    },
                .swarm_check = no_swarm_checks,
                .make = [](const TrainConfig& config, InnerLoop& loop,
                           const StrategyGroups& groups) -> std::unique_ptr<Strategy> {
                  return std::make_unique<DataParallel>(loop.layout(), config.adamw, groups.group);
                }},
    StrategyRow{
        .kind = StrategyKind::streaming,
        .name = "streaming",
        .group = RoundGroup::asynchronous,
        .over_swarm = true,
        .trainer_peer = true,
        .steps_with_adamw = true,
        .diloco_round_options = false,
        .begun_round_lands = false,  // the round in flight at the end stays on the wire
        .validate = validate_streaming,
        .default_codec = int8_codec,
        .round_codec = [](const StrategySection& s) { return s.fragment_codec; },
        .settings =
            [](const TrainConfig& config, std::vector<proto::Setting>& out) {
              add_codec_setting(config, out);
              add_all_reduce_setting(config, out);
              add_streaming_settings(config.strategy, out);
            },
        .identity = streaming_identity,
        .final_round = streaming_final_round,
        .shared_names =
            [](const TrainConfig& config) {
              return StreamingDiLoCo::shared_names(streaming_config(config.strategy).eager);
            },
        .describe = describe_streaming,
        .swarm_check = check_streaming_over_swarm,
        .make =
            [](const TrainConfig& config, InnerLoop& loop, const StrategyGroups& groups) {
              return make_streaming(config, loop, *groups.async);
            }},
    StrategyRow{
        .kind = StrategyKind::demo,
        .name = "demo",
        .group = RoundGroup::all_gather,
        .over_swarm = true,
        .trainer_peer = false,
        .steps_with_adamw = false,
        .diloco_round_options = false,
        .begun_round_lands = true,
        .validate = validate_demo,
        .default_codec = demo_codec_spec,
        .round_codec = the_codec,
        .settings =
            [](const TrainConfig& config, std::vector<proto::Setting>& out) {
              add_codec_setting(config, out);
              add_demo_settings(config, out);
            },
        .identity = demo_identity,
        .final_round = a_round_a_step,
        .shared_names =
            [](const TrainConfig& config) { return DeMo::shared_names(demo_config(config)); },
        .describe = describe_demo,
        .swarm_check = no_swarm_checks,
        .make =
            [](const TrainConfig& config, InnerLoop& loop, const StrategyGroups& groups) {
              return make_demo(config, loop, *groups.gather, groups.overlapped_gather);
            }},
    StrategyRow{
        .kind = StrategyKind::sparseloco,
        .name = "sparseloco",
        .group = RoundGroup::all_gather,
        .over_swarm = true,
        .trainer_peer = true,
        .steps_with_adamw = true,
        .diloco_round_options = false,
        .begun_round_lands = true,
        .validate = validate_sparseloco,
        .default_codec = sparseloco_codec_spec,
        .round_codec = the_codec,
        .settings =
            [](const TrainConfig& config, std::vector<proto::Setting>& out) {
              add_codec_setting(config, out);
              add_sparseloco_settings(config, out);
            },
        .identity = sparseloco_identity,
        .final_round = sparseloco_final_round,
        .shared_names = [](const TrainConfig&) { return SparseLoCo::shared_names(); },
        .describe = describe_sparseloco,
        .swarm_check = no_swarm_checks,
        .make =
            [](const TrainConfig& config, InnerLoop& loop, const StrategyGroups& groups) {
              return make_sparseloco(config, loop, *groups.gather);
            }},
};

// The enum is the row's index (strategy_row(StrategyKind)).
static_assert([] {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (static_cast<std::size_t>(kRows[i].kind) != i) return false;
  return true;
}());

}  // namespace

std::span<const StrategyRow> strategy_rows() {
  return kRows;
}

const StrategyRow& strategy_row(std::string_view kind) {
  const auto row = std::ranges::find(kRows, kind, &StrategyRow::name);
  if (row == kRows.end())
    throw Error(ErrorCategory::config, fmt::format("strategy.kind must be {}, not '{}'",
                                                   strategy_names(nullptr, '\''), kind));
  return *row;
}

const StrategyRow& strategy_row(StrategyKind kind) {
  return kRows.at(static_cast<std::size_t>(kind));
}

std::string_view strategy_name(StrategyKind kind) {
  return strategy_row(kind).name;
}

std::string strategy_names(bool StrategyRow::*having, char quote) {
  std::vector<std::string> names;
  for (const StrategyRow& row : kRows)
    if (having == nullptr || row.*having)
      names.push_back(quote == '\0' ? std::string(row.name)
                                    : fmt::format("{0}{1}{0}", quote, row.name));
  if (names.size() < 2) return fmt::format("{}", fmt::join(names, ""));
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} or {}", fmt::join(names, ", "), last);
}

}  // namespace loco::train
