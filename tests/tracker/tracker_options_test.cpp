// loco-tracker's options turned into the core's configuration: what is refused before a run starts.

#include "tracker/tracker_options.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"

namespace loco::tracker {
namespace {

// The state file's reader takes a run id of kMaxTextBytes at most: a longer one would be saved
// and then refused at the next start.
TEST(TrackerOptions, ARunIdLongerThanTheStateTakesIsRefused) {
  TrackerOptions o;
  o.run_id = std::string(proto::kMaxTextBytes + 1, 'r');
  o.run_config = "configs/tiny.toml";
  try {
    to_core_config(o);
    ADD_FAILURE() << "a run id of " << o.run_id.size() << " bytes was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config);
    EXPECT_NE(e.message().find("--run.id: 1025 bytes, at most 1024"), std::string::npos)
        << e.message();
  }
}

}  // namespace
}  // namespace loco::tracker
