// Streaming DiLoCo and eager updates (docs/DESIGN.md §1.2-1.3): the α-merge and the eager proxy
// against direct computations; with P = 1, τ = 0, α = 0 and fp32 it is DiLoCo bit for bit; M = 4
// workers in one process hold the same shared state after every fragment sync and learn, close to
// DiLoCo at the same H; a run resumes from its checkpoint bit for bit.

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "../support/temp_dir.hpp"
#include "../support/tiny_train_config.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/model.hpp"
#include "loco/train/diloco.hpp"
#include "loco/train/local_async_group.hpp"
#include "loco/train/local_groups.hpp"
#include "loco/train/streaming_diloco.hpp"
#include "loco/train/trainer.hpp"

namespace loco::train {
namespace {

std::vector<float> normals(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.normal();
  return v;
}

TEST(Streaming, AlphaMergeIsTheConvexCombination) {
  const std::vector<float> global = normals(100, 1);
  for (const float alpha : {0.0f, 0.5f, 0.25f, 1.0f}) {
    std::vector<float> local = normals(100, 2);
    const std::vector<float> before = local;
    alpha_merge(alpha, local, global);
    for (std::size_t i = 0; i < local.size(); ++i) {
      const double want = alpha * static_cast<double>(before[i]) + (1.0 - alpha) * global[i];
      EXPECT_NEAR(local[i], want, 1e-6) << alpha << " " << i;
    }
    if (alpha == 0.0f) {
      EXPECT_EQ(local, global) << "α = 0 takes the global values exactly";
    }
    if (alpha == 1.0f) {
      EXPECT_EQ(local, before) << "α = 1 keeps the local values exactly";
    }
  }
}

TEST(Streaming, EagerProxyIsThePreviousMeanPlusTheOwnChangeOverM) {
  const std::vector<float> mean_prev = normals(64, 3), delta = normals(64, 4),
                           delta_prev = normals(64, 5);
  std::vector<float> out(64);
  eager_proxy(mean_prev, delta, delta_prev, 4, out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double want = mean_prev[i] + (static_cast<double>(delta[i]) - delta_prev[i]) / 4.0;
    EXPECT_NEAR(out[i], want, 1e-6);
  }
  // When every member's Δ repeats its previous one, the proxy is the previous mean.
  eager_proxy(mean_prev, delta, delta, 3, out);
  EXPECT_EQ(out, mean_prev);
}

TrainConfig streaming_run(std::uint32_t shard, std::uint32_t shards) {
  return test::tiny_train_config(shard, shards, /*n_layer=*/2, /*batch=*/8);
}

StreamingConfig streaming_config(std::size_t fragments, std::uint64_t tau, float alpha) {
  StreamingConfig c;
  c.inner_steps = 10;
  c.fragments = fragments;
  c.tau = tau;
  c.alpha = alpha;
  return c;
}

DiLoCoConfig diloco_config() {
  DiLoCoConfig c;
  c.inner_steps = 10;
  return c;
}

TEST(Streaming, ConfigErrorsNameTheOption) {
  auto message = [](const StreamingConfig& c) {
    try {
      c.validate();
    } catch (const Error& e) {
      return e.message();
    }
    return std::string("valid");
  };
  EXPECT_EQ(message(streaming_config(2, 4, 0.5f)), "valid");
  EXPECT_NE(message(streaming_config(2, 5, 0.5f)).find("strategy.tau"), std::string::npos);
  EXPECT_NE(message(streaming_config(2, 0, 1.5f)).find("strategy.alpha"), std::string::npos);
  StreamingConfig eager = streaming_config(2, 1, 0.5f);
  eager.eager = Eager::overlapped;
  EXPECT_NE(message(eager).find("strategy.tau"), std::string::npos);
  EXPECT_THROW(parse_eager("eventually"), Error);
}

TEST(Streaming, OneFragmentNoDelayNoMergeIsDiLoCoBitForBit) {
  model::set_compute_threads(1);
  const TrainConfig config = streaming_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop a(config, corpus), b(config, corpus);
  SoloGroup alone;
  LocalAsyncGroup alone_async(1, "fp32");
  DiLoCo diloco(diloco_config(), a.layout(), alone);
  StreamingDiLoCo streaming(streaming_config(1, 0, 0.0f), b.layout(), alone_async.member(0));
  diloco.begin(a, Start::fresh);
  streaming.begin(b, Start::fresh);
  for (int step = 0; step < 30; ++step) {
    for (auto [loop, strategy] :
         {std::pair<InnerLoop*, Strategy*>{&a, &diloco}, {&b, &streaming}}) {
      loop->forward_backward();
      loop->optimizer_step();
      strategy->after_step(*loop);
    }
    ASSERT_EQ(blake2b(a.params()), blake2b(b.params())) << "step " << step + 1;
    ASSERT_EQ(diloco.shared().hash(), streaming.shared().hash()) << "step " << step + 1;
  }
  EXPECT_EQ(streaming.shared().round(), 3u);
}

// A group of one that records when the strategy starts and finishes each round, and returns the
// member's own Δ as the mean, or skips the rounds in `skip` (as a swarm does with too few peers).
class RecordingGroup final : public AsyncOuterGroup {
 public:
  explicit RecordingGroup(const InnerLoop& loop) : loop_(loop) {}
  std::size_t members() const override { return 1; }
  Handle start_round(std::size_t fragment, std::span<const float> delta, Landing landing) override {
    events.push_back({loop_.steps(), fragment, true});
    fragments.push_back(fragment);
    deltas.emplace_back(delta.begin(), delta.end());
    landings.push_back(std::move(landing));
    return deltas.size() - 1;
  }
  RoundResult finish_round(Handle handle) override {
    events.push_back({loop_.steps(), fragments[handle], false});
    if (skip.contains(handle)) return RoundResult{.kind = RoundResult::Kind::skipped};
    landings[handle].tentative(deltas[handle]);
    landings[handle].install();
    return RoundResult{.kind = RoundResult::Kind::committed, .members = 1};
  }
  struct Event {
    std::uint64_t step;
    std::size_t fragment;
    bool start;
    bool operator==(const Event&) const = default;
  };
  std::set<Handle> skip;
  std::vector<Event> events;
  std::vector<std::size_t> fragments;  // by handle
  std::vector<std::vector<float>> deltas;
  std::vector<Landing> landings;

 private:
  const InnerLoop& loop_;
};

TEST(Streaming, SendsAtTpLandsTauLaterAndAppliesTheOuterStepAndTheMerge) {
  model::set_compute_threads(1);
  const TrainConfig config = streaming_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  RecordingGroup group(loop);
  StreamingDiLoCo streaming(streaming_config(2, 3, 0.5f), loop.layout(), group);
  streaming.begin(loop, Start::fresh);
  const Arena start = loop.params();
  Arena at_send = start, before_landing = start, after_landing = start, theta = start;
  for (int step = 0; step < 20; ++step) {
    loop.forward_backward();
    loop.optimizer_step();
    if (loop.steps() == 5) at_send = loop.params();
    if (loop.steps() == 8) before_landing = loop.params();
    streaming.after_step(loop);
    if (loop.steps() == 8) {
      after_landing = loop.params();
      theta = streaming.shared().arena(0);
    }
  }
  // H = 10, P = 2, τ = 3: fragment 0 leaves after steps 5 and 15 and lands after 8 and 18;
  // fragment 1 leaves after 10 and 20 and lands after 13. The loop stepped all the while.
  using E = RecordingGroup::Event;
  EXPECT_EQ(group.events, (std::vector<E>{{5, 0, true},
                                          {8, 0, false},
                                          {10, 1, true},
                                          {13, 1, false},
                                          {15, 0, true},
                                          {18, 0, false},
                                          {20, 1, true}}));
  // Fragment 0's first landing against a direct computation (v = 0 before it): Δ = θ_0 −
  // local(5), θ = θ_0 − η(Δ + μΔ), local(8) ← α·local(8) + (1−α)·θ; fragment 1 untouched.
  std::size_t at = 0;
  for (const ArenaRange& r : streaming.fragments()[0].ranges) {
    for (std::size_t i = r.offset; i < r.offset + r.size; i += 5) {
      const float delta = start.data()[i] - at_send.data()[i];
      EXPECT_EQ(group.deltas[0][at + i - r.offset], delta);
      EXPECT_FLOAT_EQ(theta.data()[i], start.data()[i] - 0.7f * (delta + 0.9f * delta));
      EXPECT_FLOAT_EQ(after_landing.data()[i],
                      0.5f * before_landing.data()[i] + 0.5f * theta.data()[i]);
    }
    at += r.size;
  }
  for (const ArenaRange& r : streaming.fragments()[1].ranges) {
    for (std::size_t i = r.offset; i < r.offset + r.size; ++i)
      EXPECT_EQ(after_landing.data()[i], before_landing.data()[i]);
  }
  EXPECT_EQ(streaming.shared().round(), 3u);
}

TEST(Streaming, ASkippedRoundChangesNothingAndItsFragmentGoesAgainAtTheNextSlot) {
  model::set_compute_threads(1);
  const TrainConfig config = streaming_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop loop(config, corpus);
  RecordingGroup group(loop);
  group.skip = {0};
  StreamingDiLoCo streaming(streaming_config(2, 3, 0.5f), loop.layout(), group);
  streaming.begin(loop, Start::fresh);
  const Arena start = loop.params();
  Arena before_landing = start;
  for (int step = 0; step < 20; ++step) {
    loop.forward_backward();
    loop.optimizer_step();
    if (loop.steps() == 8) before_landing = loop.params();
    streaming.after_step(loop);
    if (loop.steps() == 8) {
      EXPECT_EQ(blake2b(loop.params()), blake2b(before_landing)) << "no merge";
      EXPECT_EQ(blake2b(streaming.shared().arena(0)), blake2b(start)) << "no outer step";
      EXPECT_EQ(streaming.shared().round(), 0u);
    }
  }
  // Round 1 (fragment 0, sent after step 5) is skipped: the round number stays, so the slot of
  // fragment 1 (step 10) sends fragment 0 again as round 1; fragment 1 follows at step 15.
  using E = RecordingGroup::Event;
  EXPECT_EQ(group.events, (std::vector<E>{{5, 0, true},
                                          {8, 0, false},
                                          {10, 0, true},
                                          {13, 0, false},
                                          {15, 1, true},
                                          {18, 1, false},
                                          {20, 0, true}}));
  EXPECT_EQ(streaming.shared().round(), 2u);
}

// A trainer that is not an InnerLoop (the C API's, host/trainer_peer.hpp) runs the same rounds
// through start_fragment and land_fragment at the schedule's steps as after_step does: the same
// events, Δ, parameters and shared state after every step, a skipped round included.
TEST(Streaming, FragmentRoundsOfATrainerAreAfterStepsBitForBit) {
  model::set_compute_threads(1);
  const TrainConfig config = streaming_run(0, 1);
  const Corpus corpus(config.data, 16);
  InnerLoop a(config, corpus), b(config, corpus);
  RecordingGroup group_a(a), group_b(b);
  group_a.skip = group_b.skip = {1};
  const StreamingConfig c = streaming_config(2, 3, 0.5f);
  StreamingDiLoCo by_step(c, a.layout(), group_a), by_call(c, b.layout(), group_b);
  by_step.begin(a, Start::fresh);
  by_call.begin(b, Start::fresh);
  const FragmentSchedule schedule(c.inner_steps, c.fragments, c.tau);
  std::uint64_t started_at = 0;
  for (int step = 0; step < 30; ++step) {
    for (InnerLoop* loop : {&a, &b}) {
      loop->forward_backward();
      loop->optimizer_step();
    }
    by_step.after_step(a);
    const std::uint64_t s = b.steps();
    if (by_call.fragment_started() && s == started_at + c.tau) {
      EXPECT_EQ(by_call.land_fragment(b.params()).kind == RoundResult::Kind::skipped,
                group_b.skip.contains(group_b.deltas.size() - 1));
    }
    for (std::size_t slot = 0; slot < c.fragments; ++slot) {
      if (!schedule.sends(slot, s)) continue;
      const std::size_t p = by_call.start_fragment(b.params());
      EXPECT_EQ(p, by_call.started_fragment());
      started_at = s;
    }
    ASSERT_EQ(blake2b(a.params()), blake2b(b.params())) << "step " << s;
    ASSERT_EQ(by_step.shared().hash(), by_call.shared().hash()) << "step " << s;
  }
  EXPECT_EQ(group_a.events, group_b.events);
  EXPECT_EQ(group_a.deltas, group_b.deltas);
  EXPECT_EQ(by_call.shared().round(), 4u);  // 6 rounds started, 1 skipped, 1 in flight
}

// The same for eager updates (one fragment, τ = 0, as over a swarm): at each send the round in
// flight lands, then the next starts, its merge going into the trainer's parameters.
TEST(Streaming, EagerRoundsOfATrainerAreAfterStepsBitForBit) {
  model::set_compute_threads(1);
  const TrainConfig config = streaming_run(0, 1);
  const Corpus corpus(config.data, 16);
  for (const Eager eager : {Eager::delayed, Eager::overlapped}) {
    InnerLoop a(config, corpus), b(config, corpus);
    RecordingGroup group_a(a), group_b(b);
    group_a.skip = group_b.skip = {1};
    StreamingConfig c = streaming_config(1, 0, 0.5f);
    c.eager = eager;
    StreamingDiLoCo by_step(c, a.layout(), group_a), by_call(c, b.layout(), group_b);
    by_step.begin(a, Start::fresh);
    by_call.begin(b, Start::fresh);
    for (int step = 0; step < 40; ++step) {
      for (InnerLoop* loop : {&a, &b}) {
        loop->forward_backward();
        loop->optimizer_step();
      }
      by_step.after_step(a);
      if (by_call.schedule().sends(0, b.steps())) {
        if (by_call.fragment_started()) by_call.land_fragment(b.params());
        by_call.start_fragment(b.params());
      }
      ASSERT_EQ(blake2b(a.params()), blake2b(b.params())) << "step " << b.steps();
      ASSERT_EQ(by_step.shared().hash(), by_call.shared().hash()) << "step " << b.steps();
    }
    EXPECT_EQ(group_a.events, group_b.events);
    EXPECT_EQ(by_call.shared().round(), 2u);  // 4 rounds started, 1 skipped, 1 in flight
  }
}

struct GroupRun {
  std::vector<float> val_loss;  // by worker, after training
  float initial_loss = 0;       // worker 0, before training
  std::size_t syncs = 0;        // shared-state changes seen by worker 0
  std::uint64_t bytes_per_worker = 0;
};

// M workers, one thread each, on their own shards; checks after every step that every worker's
// shared state is the same as worker 0's at that step.
GroupRun run_group(std::size_t workers,
                   const std::function<std::unique_ptr<Strategy>(InnerLoop&, OuterGroup&,
                                                                 AsyncOuterGroup&)>& make) {
  model::set_compute_threads(1);  // one thread per worker: OpenMP teams would oversubscribe
  ThreadGroup group(workers);
  LocalAsyncGroup async_group(workers, "fp4:block=64");
  std::vector<std::vector<Digest>> hashes(workers);
  GroupRun run;
  run.val_loss.resize(workers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const TrainConfig config =
          streaming_run(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(workers));
      const Corpus corpus(config.data, 16);
      InnerLoop loop(config, corpus);
      const auto strategy = make(loop, group.member(w), async_group.member(w));
      strategy->begin(loop, Start::fresh);
      if (w == 0) run.initial_loss = loop.evaluate();
      std::uint64_t round = 0;
      while (loop.steps() < config.train.steps) {
        loop.forward_backward();
        loop.optimizer_step();
        strategy->after_step(loop);
        hashes[w].push_back(strategy->shared().hash());
        if (w == 0 && strategy->shared().round() != round) ++run.syncs;
        round = strategy->shared().round();
      }
      run.val_loss[w] = loop.evaluate();
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t w = 1; w < workers; ++w) EXPECT_EQ(hashes[w], hashes[0]) << "worker " << w;
  run.bytes_per_worker = async_group.bytes_handed_over(0);
  return run;
}

GroupRun run_streaming(StreamingConfig config) {
  return run_group(4, [config](InnerLoop& loop, OuterGroup&, AsyncOuterGroup& async_group) {
    return std::make_unique<StreamingDiLoCo>(config, loop.layout(), async_group);
  });
}

TEST(Streaming, FourWorkersAgreeAfterEverySyncLearnAndStayCloseToDiLoCo) {
  const GroupRun diloco = run_group(4, [](InnerLoop& loop, OuterGroup& group, AsyncOuterGroup&) {
    return std::make_unique<DiLoCo>(diloco_config(), loop.layout(), group);
  });
  const StreamingConfig base = streaming_config(2, 2, 0.5f);
  StreamingConfig strided = base;
  strided.layout = FragmentLayout::strided;
  StreamingConfig overlapped = streaming_config(2, 0, 0.5f), delayed = overlapped;
  overlapped.eager = Eager::overlapped;
  delayed.eager = Eager::delayed;
  for (const auto& [name, config] : {std::pair{"sequential", base},
                                     {"strided", strided},
                                     {"overlapped", overlapped},
                                     {"delayed", delayed}}) {
    const GroupRun streaming = run_streaming(config);
    // 60 steps, H = 10, two fragments sent after steps 5, 10, 15, ...: 12 rounds, of which the
    // last (sent at 60) is still in flight at the end, and eager rounds land at the next send.
    EXPECT_EQ(streaming.syncs, config.eager == Eager::none ? 11u : 10u) << name;
    for (float loss : streaming.val_loss) {
      EXPECT_LT(loss, 0.8f * streaming.initial_loss) << name;
      // A loose bound: in 60 steps the fragments land up to τ late, the last is still in
      // flight and Δ travels in 4 bits (DiLoCo's ThreadGroup sends fp32); STRATEGIES.md has
      // the figures of longer runs.
      EXPECT_LT(loss, 1.15f * diloco.val_loss[0]) << name << ": DiLoCo " << diloco.val_loss[0];
    }
    EXPECT_GT(streaming.bytes_per_worker, 0u);
  }
}

TrainConfig streaming_run() {
  TrainConfig run = streaming_run(0, 1);
  run.train.steps = 24;
  run.strategy.kind = "streaming";
  run.strategy.diloco_h = 8;
  run.strategy.fragments = 2;  // sent after steps 4, 8, 12, ...
  run.strategy.tau = 2;        // landing after steps 6, 10, 14, ...
  return run;
}

TEST(Streaming, ResumesBitForBitOutsideAFlightAndRefusesInside) {
  test::TempDir dir;
  TrainConfig run = streaming_run();
  const TrainSummary straight = run_training(run);
  run.train.checkpoint = (dir / "streaming.safetensors").string();
  run.train.stop_at = 11;  // fragment 0 landed at 10, fragment 1 leaves at 16
  run_training(run);
  run.train.stop_at = 0;
  run.train.resume = run.train.checkpoint;
  EXPECT_EQ(run_training(run).params_blake2b, straight.params_blake2b);

  run.train.resume.clear();
  run.train.stop_at = 13;  // fragment 0 left at 12, lands at 14
  run_training(run);
  run.train.stop_at = 0;
  run.train.resume = run.train.checkpoint;
  EXPECT_THROW(run_training(run), Error);
  // A checkpoint of another schedule is not this run's.
  TrainConfig other = streaming_run();
  other.strategy.fragments = 3;
  other.strategy.tau = 0;
  other.train.resume = run.train.checkpoint;
  EXPECT_THROW(run_training(other), Error);
}

}  // namespace
}  // namespace loco::train
