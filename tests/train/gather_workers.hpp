#pragma once
// M workers in one process, each on its own shard and its own thread, training one gather
// strategy (DeMo, SparseLoCo) over a ThreadGather, which itself asserts that the members'
// tentative hashes agree. What every such test checks is here; what one strategy adds (its own
// state, its rounds, its message size) stays in its test.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/model/model.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/strategy.hpp"

namespace loco::test {

template <class S>
struct GatherWorkers {
  // worker_configs[w] is worker w's (its shard among their number).
  explicit GatherWorkers(std::vector<train::TrainConfig> worker_configs)
      : configs(std::move(worker_configs)), group(configs.size()) {
    model::set_compute_threads(1);
    for (const train::TrainConfig& c : configs) {
      corpora.push_back(std::make_unique<train::Corpus>(c.data, 16));
      loops.push_back(std::make_unique<train::InnerLoop>(c, *corpora.back()));
    }
    const std::size_t n = size();
    strategies.resize(n);
    hashes.resize(n);
    first_loss.resize(n);
    last_loss.resize(n);
    optimizer_steps.resize(n);
  }

  std::size_t size() const { return configs.size(); }

  // Each worker builds its strategy with make(config, loop, gather member) in its own thread,
  // then runs `steps` steps as the trainer does (strategy.hpp), noting the shared-state hash
  // after each and the validation loss before and after.
  template <class Make>
  void run(std::uint64_t steps, Make make) {
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < size(); ++w) {
      threads.emplace_back([this, w, steps, &make] {
        train::InnerLoop& loop = *loops[w];
        strategies[w] = make(configs[w], loop, group.member(w));
        S& s = *strategies[w];
        s.begin(loop, train::Start::fresh);
        first_loss[w] = loop.evaluate();
        for (std::uint64_t step = 0; step < steps; ++step) {
          loop.forward_backward();
          if (s.on_gradients(loop)) {
            loop.optimizer_step();
            ++optimizer_steps[w];
          }
          s.after_step(loop);
          hashes[w].push_back(s.shared().hash());
        }
        last_loss[w] = loop.evaluate();
      });
    }
    for (auto& t : threads) t.join();
  }

  // The same shared-state hash after every step and the same parameters at the end, every
  // member's part in the last round, validation loss falling, bytes sent.
  void expect_agree_and_learn() const {
    for (std::size_t w = 0; w < size(); ++w) {
      EXPECT_EQ(hashes[w], hashes[0]) << "worker " << w;
      EXPECT_EQ(blake2b(loops[w]->params()), blake2b(loops[0]->params())) << "worker " << w;
      EXPECT_EQ(strategies[w]->last_parts_used(), size()) << "worker " << w;
      EXPECT_LT(last_loss[w], 0.9f * first_loss[w]) << "worker " << w;
    }
    EXPECT_GT(group.bytes_contributed(0), 0u);
  }

  std::vector<train::TrainConfig> configs;
  train::ThreadGather group;
  std::vector<std::unique_ptr<train::Corpus>> corpora;
  std::vector<std::unique_ptr<train::InnerLoop>> loops;
  std::vector<std::unique_ptr<S>> strategies;
  std::vector<std::vector<Digest>> hashes;
  std::vector<float> first_loss, last_loss;
  std::vector<std::uint64_t> optimizer_steps;  // steps on which on_gradients asked for AdamW's
};

}  // namespace loco::test
