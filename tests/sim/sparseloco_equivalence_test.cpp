// SparseLoCo over the swarm and in one process give the same bits: two simulated loco-peer
// processes (sim/strategy_process.hpp: the real strategy over SwarmGroup and the all-gather core)
// against two workers of one process gathering through a ThreadGather, on the same two shards.
// With two members the mean does not depend on which member is first ((0 + a) + b and (0 + b) + a
// are the same float, and the median of two norms is their minimum either way), so the swarm's
// member order and which peer got which shard need not be known.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "loco/train/local_gather.hpp"
#include "loco/train/make_sparseloco.hpp"
#include "loco/train/step_loop.hpp"
#include "strategy_support.hpp"

namespace loco::sim {
namespace {

constexpr std::uint64_t kEquivalenceSteps = 60;  // H = 10: six rounds

// The state two workers in one process hold after kEquivalenceSteps, on shards 0 and 1 of
// `shard_count` (the simulator's tracker hands the first free shards to the first peers).
Digest two_workers_in_one_process(const train::TrainConfig& run, std::uint32_t shard_count) {
  model::set_compute_threads(run.train.threads);
  train::ThreadGather group(2);
  std::vector<Digest> held(2);
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      train::TrainConfig config = run;
      config.data.shard = data::ShardSpec{w, shard_count};
      const train::Corpus corpus(config.data, static_cast<std::uint32_t>(config.model.gpt.vocab));
      train::InnerLoop loop(config, corpus);
      train::SparseLoCo s(train::sparseloco_config(config.strategy), loop.layout(),
                          group.member(w));
      s.begin(loop, train::Start::fresh);
      for (std::uint64_t step = 0; step < kEquivalenceSteps; ++step) train::train_step(loop, s);
      held[w] = s.shared().hash();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(held[0], held[1]);
  return held[0];
}

TEST(SimSparseLoCo, TheSwarmAndTwoWorkersOfOneProcessHoldTheSameBits) {
  spdlog::set_level(spdlog::level::warn);
  const std::uint64_t seed = 31;
  test::print_seed(seed);
  const auto run = test::tiny_run("sparseloco", kEquivalenceSteps);
  Swarm swarm(test::strategy_swarm(seed, 2, run));
  swarm.start();
  ASSERT_TRUE(swarm.run_for(std::chrono::seconds(60)));
  ASSERT_TRUE(test::failures(swarm, kEquivalenceSteps / 10, kEquivalenceSteps).empty())
      << test::failures(swarm, kEquivalenceSteps / 10, kEquivalenceSteps);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(swarm.peer(i).process()->rounds_committed(), kEquivalenceSteps / 10) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).process()->last_round().members, 2u) << "peer " << i;
    EXPECT_EQ(swarm.peer(i).held_round(), kEquivalenceSteps / 10);
  }
  EXPECT_EQ(swarm.peer(0).held_hash(), swarm.peer(1).held_hash());
  // The tracker's shard count: its default, or swarm.cpp's 4·peers + 16 if larger.
  const std::uint32_t shards =
      std::max<std::uint32_t>(proto::TrackerCoreConfig{}.shard_count, 4 * 2 + 16);
  EXPECT_EQ(swarm.peer(0).held_hash(), two_workers_in_one_process(run->config, shards))
      << "the swarm's state is not the one process's";
  spdlog::set_level(spdlog::level::info);
}

}  // namespace
}  // namespace loco::sim
