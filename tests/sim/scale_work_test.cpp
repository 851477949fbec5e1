// The work of a scale run, counted rather than timed (docs/SCALE.md, "Measured again"). The
// simulator's 1,000-peer hour went from under a minute to 13 and nothing in the suite noticed:
// the trace was the same, only the tracker did more per input. A wall-clock bound would fail on a
// loaded machine or pass on a fast one; a count of the tracker's per-member work per input does
// neither, and a quadratic change (a pass over the members per member, or several per input)
// multiplies it by the members or by the passes.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SimScaleWork, TheQuorumRuleWalksTheMembersAtMostOncePerTrackerInput) {
  const std::uint64_t seed = 1;
  test::print_seed(seed);
  constexpr std::size_t kPeers = 200;
  SwarmConfig c = test::instant_swarm(seed, kPeers);
  c.links.latency_min = milliseconds(20);  // members ready at different times, as at scale
  c.links.latency_max = milliseconds(200);
  c.compute.dim = 2048;
  c.step_time = milliseconds(500);
  c.step_time_spread = 0.2;
  c.mean_tolerance = -1;  // as bench-sim-scale: the per-ring check of every mean is O(M x dim)
  Swarm swarm(c);
  swarm.start();
  // The rule runs only while members are ready: its passes are counted against the inputs of the
  // 50 ms slices in which it ran (a slice with a pass has members ready for most of its inputs).
  const proto::TrackerCore& core = *swarm.tracker().core();
  std::uint64_t walked = 0, inputs = 0, slices = 0;
  for (int i = 0; i < 800; ++i) {
    const std::uint64_t walked_before = core.quorum_members_walked();
    const std::uint64_t inputs_before = swarm.tracker().inputs();
    ASSERT_TRUE(swarm.run_for(milliseconds(50)));
    if (core.quorum_members_walked() == walked_before) continue;
    walked += core.quorum_members_walked() - walked_before;
    inputs += swarm.tracker().inputs() - inputs_before;
    ++slices;
  }
  std::printf(
      "%llu slices with members ready: %llu tracker inputs, %llu members walked (%.2f passes "
      "over %zu members per input)\n",
      static_cast<unsigned long long>(slices), static_cast<unsigned long long>(inputs),
      static_cast<unsigned long long>(walked),
      static_cast<double>(walked) / static_cast<double>(inputs * kPeers), kPeers);
  ASSERT_GT(slices, 50u) << "members were seldom ready: this would check little";
  // One pass per input (three, before, docs/SCALE.md); half as many again for the slices' edges.
  EXPECT_LE(walked, inputs * kPeers * 3 / 2) << "more than one pass over the members per input";
}

}  // namespace
}  // namespace loco::sim
