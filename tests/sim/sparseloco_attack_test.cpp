// A SparseLoCo member that lies in its messages (sim/lying_gather.hpp), over the swarm: five
// simulated loco-peer processes, one of them sending its update ×1000 every round. Every honest
// member clips the liar's part to clip × the median norm (sparseloco_components.hpp), so the run
// ends where a clean run ends, give or take what one member's clipped part moves; with the clip
// off, the same liar ruins the model. The comparison is between runs of the same seed and data.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "strategy_support.hpp"

namespace loco::sim {
namespace {

constexpr std::size_t kAttackPeers = 5;
constexpr std::size_t kAttackLiar = 2;
constexpr std::uint64_t kAttackSteps = 40;  // H = 10: four rounds

// The honest members' mean validation loss once they finished; every honest member finished its
// steps in the same state, the liar still a member of the last round.
double honest_loss(std::uint64_t seed, float clip, Behaviour liar) {
  auto run = test::tiny_run("sparseloco", kAttackSteps);
  train::TrainConfig config = run->config;
  config.strategy.sparseloco_clip = clip;
  auto measured = std::make_shared<StrategyRun>(config);
  measured->evaluate = true;
  SwarmConfig c = test::strategy_swarm(seed, kAttackPeers, measured);
  c.behaviours = {{kAttackLiar, liar}};
  Swarm swarm(c);
  swarm.start();
  EXPECT_TRUE(swarm.run_for(std::chrono::seconds(60)));
  EXPECT_TRUE(test::failures(swarm, kAttackSteps / 10, kAttackSteps).empty())
      << test::failures(swarm, kAttackSteps / 10, kAttackSteps);
  double sum = 0;
  std::map<Digest, std::size_t> held;
  for (std::size_t i = 0; i < kAttackPeers; ++i) {
    if (i == kAttackLiar) continue;
    const StrategyProcess& p = *swarm.peer(i).process();
    EXPECT_EQ(p.last_round().members, kAttackPeers) << "peer " << i;
    ++held[swarm.peer(i).held_hash()];
    sum += static_cast<double>(p.final_loss());
  }
  EXPECT_EQ(held.size(), 1u) << "the honest members hold different states";
  return sum / static_cast<double>(kAttackPeers - 1);
}

TEST(SimSparseLoCoAttack, TheClipBoundsAScaledMemberOverTheSwarm) {
  spdlog::set_level(spdlog::level::warn);
  const std::uint64_t seed = 48;
  test::print_seed(seed);
  const double clean = honest_loss(seed, 2.0f, Behaviour::honest);
  const double clipped = honest_loss(seed, 2.0f, Behaviour::scaled);
  const double unclipped = honest_loss(seed, 0.0f, Behaviour::scaled);
  ASSERT_TRUE(std::isfinite(clean));
  EXPECT_LT(clipped, clean * 1.05) << "clean " << clean;
  // NaN (θ no longer finite) fails the comparison too.
  EXPECT_FALSE(unclipped < clean * 2) << "clean " << clean << ", unclipped " << unclipped;
  spdlog::set_level(spdlog::level::info);
}

}  // namespace
}  // namespace loco::sim
