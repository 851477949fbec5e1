// The table of strategies (train/strategy_kinds.hpp): a row per kind, found by its name and by
// its enum, and an unknown kind refused with the table's names wherever a config is read.
#include "loco/train/strategy_kinds.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "loco/core/error.hpp"
#include "loco/train/make_strategy.hpp"
#include "loco/train/swarm_strategy.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {
namespace {

using ::testing::HasSubstr;

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    return e.message();
  }
  return "no error";
}

TEST(StrategyKinds, EachRowIsFoundByItsNameAndItsKind) {
  ASSERT_EQ(strategy_rows().size(), 6u);
  for (const StrategyRow& row : strategy_rows()) {
    EXPECT_EQ(&strategy_row(row.name), &row);
    EXPECT_EQ(&strategy_row(row.kind), &row);
    EXPECT_EQ(strategy_name(row.kind), row.name);
  }
  EXPECT_EQ(StrategySection{}.kind, strategy_name(StrategyKind::none));
}

TEST(StrategyKinds, AnUnknownKindIsRefusedWithTheKnownOnes) {
  TrainConfig config;
  config.strategy.kind = "lion";
  EXPECT_EQ(error_of([&] { config.validate(); }),
            "strategy.kind must be 'none', 'diloco', 'ddp', 'streaming', 'demo' or 'sparseloco', "
            "not 'lion'");
  EXPECT_THAT(error_of([&] { describe_strategy(config); }), HasSubstr("not 'lion'"));
  config.strategy.kind = "none";
  EXPECT_EQ(error_of([&] { check_swarm_strategy(config, "run.toml"); }),
            "run config run.toml: a swarm trains with [strategy] kind = \"diloco\", \"ddp\", "
            "\"streaming\", \"demo\" or \"sparseloco\", not \"none\"");
}

TEST(StrategyKinds, NamesListsTheRowsThatHaveAProperty) {
  EXPECT_EQ(strategy_names(&StrategyRow::trainer_peer, '"'),
            "\"diloco\", \"streaming\" or \"sparseloco\"");
  EXPECT_EQ(strategy_names(&StrategyRow::diloco_round_options, '\''), "'diloco'");
  EXPECT_EQ(strategy_names(nullptr, '\''),
            "'none', 'diloco', 'ddp', 'streaming', 'demo' or 'sparseloco'");
}

}  // namespace
}  // namespace loco::train
