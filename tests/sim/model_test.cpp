// The simulator with a real model (ModelCompute): each simulated peer runs train::InnerLoop on
// configs/sim-model.toml's GPT and its own shard. Learning shows through the protocol: the loss
// falls in both modes, gossip keeps peers close, and a run replays bit for bit from its seed.
#include <gtest/gtest.h>

#include "loco/cli/train_options.hpp"
#include "loco/sim/model_compute.hpp"
#include "sim_support.hpp"

namespace loco::sim {
namespace {

using std::chrono::seconds;

SwarmConfig model_swarm(std::uint64_t seed, std::size_t peers, std::size_t gossip_group) {
  train::TrainConfig model = cli::load_train_config(LOCO_SOURCE_DIR "/configs/sim-model.toml");
  // Smaller still, so the sanitized build runs it in seconds: one layer, batches of 4.
  model.model.gpt.n_layer = 1;
  model.train.batch = 4;
  model.strategy.diloco_h = 10;
  model.train.steps = 100;
  SwarmConfig c = test::instant_swarm(seed, peers);
  c.model = std::make_shared<ModelCompute>(model, static_cast<std::uint32_t>(peers));
  c.codec = model.strategy.codec_spec();
  c.gossip_group = gossip_group;
  c.mean_tolerance = 1e-2;  // int8 on the wire: the ledger's mean is of the values as sent
  return c;
}

// 100 ms steps, H = 10: a round a second, and rounds end within 10 s whatever the mode.
constexpr auto kTenRounds = seconds(10) + std::chrono::milliseconds(500);

TEST(SimModel, AllReduceTrainsTheModelAndKeepsOneState) {
  const std::uint64_t seed = 5;
  test::print_seed(seed);
  Swarm swarm(model_swarm(seed, 4, 0));
  const float start = swarm.compute().loss(swarm.compute().genesis());
  swarm.start();
  ASSERT_TRUE(swarm.run_for(kTenRounds));
  EXPECT_GE(swarm.rounds_committed(), 9u);
  const auto states = test::live_states(swarm);
  for (const auto& [i, s] : states) EXPECT_EQ(s, states.begin()->second) << "peer " << i;
  EXPECT_LT(swarm.mean_loss(), 0.6 * start) << test::replay_hint(seed, "SimModel.*");
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
}

TEST(SimModel, GossipTrainsTheModelWithPeersCloseTogether) {
  const std::uint64_t seed = 6;
  test::print_seed(seed);
  Swarm swarm(model_swarm(seed, 8, 4));
  const float start = swarm.compute().loss(swarm.compute().genesis());
  swarm.start();
  ASSERT_TRUE(swarm.run_for(kTenRounds));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_GE(swarm.peer(i).state().round, 9u) << i;
  EXPECT_LT(swarm.mean_loss(), 0.6 * start) << test::replay_hint(seed, "SimModel.*");
  // Apart (each group averages only itself) but close: a spread far below the parameters' scale.
  EXPECT_GT(swarm.spread(), 0.0);
  EXPECT_LT(swarm.spread(), 0.005);
  EXPECT_TRUE(swarm.ledger().violations().empty()) << test::violations(swarm);
}

TEST(SimModel, ARunReplaysBitForBitFromItsSeed) {
  const std::uint64_t seed = 7;
  test::print_seed(seed);
  std::vector<std::pair<std::uint64_t, std::map<std::size_t, std::pair<std::uint64_t, Digest>>>>
      runs;
  for (int run = 0; run < 2; ++run) {
    Swarm swarm(model_swarm(seed, 4, 2));
    swarm.start();
    ASSERT_TRUE(swarm.run_for(seconds(4)));
    runs.emplace_back(swarm.loop().trace_hash(), test::live_states(swarm));
  }
  EXPECT_EQ(runs[0], runs[1]) << test::replay_hint(seed, "SimModel.*");
}

}  // namespace
}  // namespace loco::sim
