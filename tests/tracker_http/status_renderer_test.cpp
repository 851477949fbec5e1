#include "tracker/status_renderer.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "sample_status.hpp"

namespace loco::tracker {
namespace {

TEST(StatusRenderer, RendersAgainOnlyOnceTheMaxAgeHasPassed) {
  int calls = 0;
  const auto counting = [&] {
    ++calls;
    return test::sample_status();
  };
  StatusRenderer cached(counting, std::chrono::hours(1));
  const std::string first = cached.json();
  EXPECT_EQ(cached.json(), first);
  EXPECT_EQ(calls, 1);
  EXPECT_NE(cached.metrics().find("loco_tracker_members 3"), std::string::npos);
  EXPECT_EQ(calls, 2);  // each body has its own age

  StatusRenderer uncached(counting, StatusRenderer::Clock::duration::zero());
  uncached.json();
  uncached.json();
  EXPECT_EQ(calls, 4);
}

TEST(StatusRenderer, AFailureIsNotCached) {
  bool fail = true;
  StatusRenderer renderer(
      [&] {
        if (fail) throw std::runtime_error("core gone");
        return test::sample_status();
      },
      std::chrono::hours(1));
  EXPECT_THROW(renderer.json(), std::runtime_error);
  fail = false;
  EXPECT_NE(renderer.json().find("gpt-small-demo"), std::string::npos);
}

}  // namespace
}  // namespace loco::tracker
