#include "loco/optim/schedule.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::optim {
namespace {

TEST(LrSchedule, WarmupThenCosineToTheFloor) {
  const LrSchedule s{.max_lr = 1.0f, .min_lr = 0.1f, .warmup_steps = 10, .total_steps = 110};
  EXPECT_FLOAT_EQ(s.at(0), 0.1f);  // (0 + 1) / 10
  EXPECT_FLOAT_EQ(s.at(4), 0.5f);
  EXPECT_FLOAT_EQ(s.at(9), 1.0f);
  EXPECT_FLOAT_EQ(s.at(10), 1.0f);   // cosine starts at the top
  EXPECT_FLOAT_EQ(s.at(60), 0.55f);  // halfway: (max + min) / 2
  EXPECT_NEAR(s.at(109), 0.1f, 1e-3f);
  EXPECT_FLOAT_EQ(s.at(110), 0.1f);
  EXPECT_FLOAT_EQ(s.at(1000), 0.1f);
  for (std::uint64_t t = 10; t < 110; ++t) EXPECT_GE(s.at(t), s.at(t + 1));
}

TEST(LrSchedule, NoWarmup) {
  const LrSchedule s{.max_lr = 2.0f, .min_lr = 0.0f, .warmup_steps = 0, .total_steps = 4};
  EXPECT_FLOAT_EQ(s.at(0), 2.0f);
  EXPECT_FLOAT_EQ(s.at(2), 1.0f);
  EXPECT_FLOAT_EQ(s.at(4), 0.0f);
}

TEST(LrSchedule, RejectsInconsistentSettings) {
  EXPECT_THROW((LrSchedule{.max_lr = 0.1f, .min_lr = 0.2f}.validate()), Error);
  EXPECT_THROW((LrSchedule{.warmup_steps = 20, .total_steps = 10}.validate()), Error);
  EXPECT_NO_THROW(LrSchedule{}.validate());
}

}  // namespace
}  // namespace loco::optim
