// The data-parallel baseline: alone it is plain AdamW, bit for bit; M workers of a thread group
// end with the same state after every step, and that state is single-worker training on the M
// batches concatenated, to float rounding.

#include "loco/train/ddp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "../support/tiny_train_config.hpp"
#include "loco/core/hash.hpp"
#include "loco/model/gpt.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/make_strategy.hpp"

namespace loco::train {
namespace {

constexpr std::uint64_t kDdpSteps = 12;

TrainConfig ddp_run(std::uint32_t shard, std::uint32_t shards) {
  TrainConfig c = test::tiny_train_config(shard, shards, /*n_layer=*/1, /*batch=*/4);
  c.strategy.kind = "ddp";
  return c;
}

TEST(DataParallel, TheFactoryBuildsItWithFp32ByDefault) {
  const TrainConfig config = ddp_run(0, 1);
  EXPECT_EQ(config.strategy.codec_spec(), "fp32");
  EXPECT_EQ(describe_strategy(config), "ddp codec=fp32");
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  SoloGroup alone;
  EXPECT_NE(dynamic_cast<DataParallel*>(make_strategy(config, loop, alone).get()), nullptr);
}

// M = 1: the mean is the gradient itself, and the AdamW step is the loop's own, on the same
// state: the same bits as training with no strategy.
TEST(DataParallel, AloneItIsPlainAdamWBitForBit) {
  model::set_compute_threads(1);
  const TrainConfig config = ddp_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop plain(config, corpus), ddp_loop(config, corpus);
  SoloGroup alone;
  DataParallel ddp(ddp_loop.layout(), config.adamw, alone);
  ddp.begin(ddp_loop, Start::fresh);
  for (std::uint64_t s = 0; s < kDdpSteps; ++s) {
    plain.forward_backward();
    plain.optimizer_step();
    ddp_loop.forward_backward();
    EXPECT_FALSE(ddp.on_gradients(ddp_loop)) << "DDP takes the AdamW step itself";
    ddp.after_step(ddp_loop);
  }
  EXPECT_EQ(ddp_loop.steps(), kDdpSteps);
  EXPECT_EQ(ddp.shared().round(), kDdpSteps);
  EXPECT_EQ(blake2b(ddp_loop.params()), blake2b(plain.params()));
  EXPECT_EQ(blake2b(ddp.shared().arena(0)), blake2b(plain.params()));
  EXPECT_EQ(blake2b(ddp_loop.optimizer().v()), blake2b(plain.optimizer().v()));
}

// M workers, each on its own shard; the reference is one model over batches of M·B rows, row
// block i being worker i's batch. Both compute the same mean gradient (the loss is a mean over
// tokens, and every worker has B·T of them), summed in another order, so not bit for bit: the
// gradients differ by float rounding, ~1e-7 of the magnitude of the terms summed. AdamW divides
// by √v̂, so an element whose gradient nearly cancels can see a relative error far above 1e-7 in
// its update (at worst a whole lr step), but such elements are few: the test bounds the
// difference of the two runs' total movement, ‖θ_ddp − θ_ref‖ ≤ 1e-3 · ‖θ_ref − θ_0‖ (measured
// 1.2e-5), and each element by a tenth of one lr step (3e-4; measured 1.1e-5).
TEST(DataParallel, WorkersStayIdenticalAndMatchOneWorkerOnTheConcatenatedBatch) {
  constexpr std::uint32_t kWorkers = 3;
  model::set_compute_threads(1);  // one thread per worker
  ThreadGroup group(kWorkers);
  std::vector<std::vector<Digest>> hashes(kWorkers);
  std::vector<Arena> finals;
  std::vector<float> first_loss(kWorkers), last_loss(kWorkers);
  std::vector<std::unique_ptr<Corpus>> corpora;
  for (std::uint32_t w = 0; w < kWorkers; ++w)
    corpora.push_back(std::make_unique<Corpus>(ddp_run(w, kWorkers).data, 16));
  std::vector<std::unique_ptr<InnerLoop>> loops;
  std::vector<TrainConfig> configs;
  for (std::uint32_t w = 0; w < kWorkers; ++w) configs.push_back(ddp_run(w, kWorkers));
  for (std::uint32_t w = 0; w < kWorkers; ++w)
    loops.push_back(std::make_unique<InnerLoop>(configs[w], *corpora[w]));
  std::vector<std::thread> threads;
  for (std::uint32_t w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      InnerLoop& loop = *loops[w];
      DataParallel ddp(loop.layout(), configs[w].adamw, group.member(w));
      ddp.begin(loop, Start::fresh);
      first_loss[w] = loop.evaluate();
      for (std::uint64_t s = 0; s < kDdpSteps; ++s) {
        loop.forward_backward();
        ddp.on_gradients(loop);
        ddp.after_step(loop);
        hashes[w].push_back(ddp.shared().hash());
      }
      last_loss[w] = loop.evaluate();
    });
  }
  for (auto& t : threads) t.join();
  for (std::uint32_t w = 1; w < kWorkers; ++w) {
    EXPECT_EQ(hashes[w], hashes[0]) << "worker " << w;
    EXPECT_EQ(blake2b(loops[w]->params()), blake2b(loops[0]->params())) << "worker " << w;
  }
  EXPECT_LT(last_loss[0], first_loss[0]);

  // The reference: the same initial parameters, the workers' batches concatenated.
  const TrainConfig& c = configs[0];
  model::Gpt reference(c.model.gpt, kWorkers * c.train.batch);
  Arena params(reference.layout()), grads(reference.layout());
  reference.init(params, c.train.seed);
  optim::AdamW adamw(reference.layout(), c.adamw);
  optim::LrSchedule schedule = c.lr;
  schedule.total_steps = c.train.steps;
  std::vector<data::BatchSampler> samplers;
  for (std::uint32_t w = 0; w < kWorkers; ++w)
    samplers.emplace_back(
        corpora[w]->train(),
        data::SamplerConfig{c.train.batch, static_cast<std::uint32_t>(c.model.gpt.context),
                            c.train.seed, configs[w].data.shard});
  data::Batch part;
  std::vector<std::int32_t> inputs, targets;
  for (std::uint64_t s = 0; s < kDdpSteps; ++s) {
    inputs.clear();
    targets.clear();
    for (auto& sampler : samplers) {
      sampler.next(part);
      inputs.insert(inputs.end(), part.inputs.begin(), part.inputs.end());
      targets.insert(targets.end(), part.targets.begin(), part.targets.end());
    }
    reference.forward(params, model::TokenBatch{inputs, targets, kWorkers * c.train.batch,
                                                static_cast<std::size_t>(c.model.gpt.context)});
    reference.backward(params, grads);
    adamw.step(params, grads, schedule.at(s));
  }
  const auto got = loops[0]->params().data();
  const auto want = params.data();
  Arena initial(reference.layout());
  reference.init(initial, c.train.seed);
  const auto start = initial.data();
  float worst = 0;
  double diff2 = 0, moved2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = got[i] - want[i], m = want[i] - start[i];
    worst = std::max(worst, static_cast<float>(std::abs(d)));
    diff2 += d * d;
    moved2 += m * m;
  }
  const double relative = std::sqrt(diff2 / moved2);
  EXPECT_LT(relative, 1e-3) << "‖θ_ddp − θ_ref‖ / ‖θ_ref − θ_0‖ after " << kDdpSteps << " steps";
  EXPECT_LT(worst, 3e-4f) << "largest parameter difference after " << kDdpSteps << " steps";
  std::printf("DDP vs concatenated batch: relative difference %.3g, largest %.3g\n", relative,
              worst);
}

}  // namespace
}  // namespace loco::train
