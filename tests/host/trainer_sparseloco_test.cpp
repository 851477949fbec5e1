// SparseLoCo through a trainer peer (host/trainer_peer.hpp, the C API's and the Python package's
// C++ side) over a real swarm: a loco-tracker process and trainer peers of this process on
// loopback, against train::SparseLoCo in one process (two workers over a ThreadGather) given the
// same trainers' parameters before every round. Both hold the same bits after every round: the
// shared state's hash and θ in the buffers. With two members the order of the parts changes no
// bit (a + b = b + a, and the clip's lower median of two norms is the smaller either way), so the
// swarm's member order need not be the workers'. A member saved, closed and loaded again goes on
// as if it had never left: its error-feedback accumulator e is in the file. Every wait is on a
// join or a round, bounded by the tracker's timers.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/temp_dir.hpp"
#include "../support/tracker_process.hpp"
#include "loco/cli/train_options.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/core/sum_of_squares.hpp"
#include "loco/host/trainer_peer.hpp"
#include "loco/model/model.hpp"
#include "loco/secure/identity.hpp"
#include "loco/train/genesis.hpp"
#include "loco/train/local_gather.hpp"
#include "loco/train/make_sparseloco.hpp"

namespace loco::host {
namespace {

using train::RoundResult;

constexpr auto kPatience = std::chrono::seconds(60);

// configs/swarm-tiny.toml as a SparseLoCo run (a chunk of 64 values, 8 kept), written in `dir`.
std::filesystem::path write_run_config(const test::TempDir& dir) {
  std::string text = test::read_text(std::string(LOCO_SOURCE_DIR) + "/configs/swarm-tiny.toml");
  text.resize(text.find("[strategy]"));
  text +=
      "[strategy]\nkind = \"sparseloco\"\ndiloco-h = 20\nsparseloco-chunk = 64\n"
      "sparseloco-topk = 8\n";
  const std::filesystem::path path = dir / "run.toml";
  std::ofstream(path) << text;
  return path;
}

// A trainer: its peer and its model's buffers (one per tensor), NaN until join writes θ.
struct Trainer {
  std::unique_ptr<TrainerPeer> peer;
  std::vector<std::vector<float>> tensors;
};

Trainer open_trainer(const test::TempDir& dir, const std::string& name,
                     const test::TrackerProcess& tracker, const std::filesystem::path& run) {
  const std::filesystem::path key = dir / (name + ".key");
  secure::write_key_file(key, secure::KeyPair::generate(), false);
  const std::filesystem::path config = dir / (name + ".toml");
  std::ofstream(config) << "log-level = \"warn\"\n[peer]\nkey = \"" << key.string()
                        << "\"\nlisten = \"127.0.0.1:0\"\n[run]\nid = \"sparse\"\nconfig = \""
                        << run.string() << "\"\n[tracker]\naddress = \"" << tracker.address()
                        << "\"\npublic-key = \"" << tracker.public_key() << "\"\n";
  Trainer t{TrainerPeer::open(config), {}};
  const ArenaLayout& layout = t.peer->layout();
  for (std::size_t i = 0; i < layout.tensor_count(); ++i) {
    const TensorInfo& info = layout.tensor(i);
    t.tensors.emplace_back(info.numel, NAN);
    t.peer->bind(info.name, info.shape, t.tensors.back().data());
  }
  return t;
}

// The inner steps of a trainer: every weight moved, by `step` times a pattern of its index.
void train_tensor(std::span<float> w, float step) {
  for (std::size_t k = 0; k < w.size(); ++k) w[k] -= step * static_cast<float>(int(k % 7) - 3);
}

void train(Trainer& t, float step) {
  for (std::vector<float>& w : t.tensors) train_tensor(w, step);
}

void train(Arena& local, float step) {
  for (std::size_t i = 0; i < local.layout().tensor_count(); ++i)
    train_tensor(local.tensor(i), step);
}

bool holds(const Trainer& t, const Arena& local) {
  for (std::size_t i = 0; i < t.tensors.size(); ++i) {
    const std::span<const float> want = std::as_const(local).tensor(i);
    if (std::memcmp(t.tensors[i].data(), want.data(), want.size_bytes()) != 0) return false;
  }
  return true;
}

// Two workers in one process, from the run's genesis: the reference.
struct Reference {
  explicit Reference(const train::TrainConfig& config) {
    train::SharedState genesis = train::genesis_state(config);
    const std::shared_ptr<const ArenaLayout> layout = genesis.arena(0).shared_layout();
    for (std::size_t w = 0; w < 2; ++w) {
      workers.push_back(std::make_unique<train::SparseLoCo>(
          train::sparseloco_config(config.strategy), layout, group.member(w)));
      workers[w]->shared() = train::genesis_state(config);
      locals.emplace_back(layout);
      locals[w].copy_from(workers[w]->shared().arena(0));
    }
  }
  void round() {
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < 2; ++w)
      threads.emplace_back([this, w] { workers[w]->round(locals[w]); });
    for (std::thread& t : threads) t.join();
  }
  train::ThreadGather group{2};
  std::vector<std::unique_ptr<train::SparseLoCo>> workers;
  std::vector<Arena> locals;
};

// Trainers `a` and `b` each run a round, together.
std::vector<RoundResult> rounds_of(Trainer& a, Trainer& b) {
  std::vector<RoundResult> results(2);
  std::thread other([&] { results[1] = b.peer->round(4.0f); });
  results[0] = a.peer->round(4.1f);
  other.join();
  return results;
}

// Round r of trainers `a` (the reference's worker 0) and `b` (worker 1): each trains as its
// worker does, both round, and both hold their worker's bits.
void same_round(Trainer& a, Trainer& b, Reference& ref, int r) {
  const float step_a = 1e-3f * static_cast<float>(r), step_b = -2e-3f;
  train(a, step_a);
  train(ref.locals[0], step_a);
  train(b, step_b);
  train(ref.locals[1], step_b);
  const std::vector<RoundResult> results = rounds_of(a, b);
  ref.round();
  for (const RoundResult& result : results) {
    EXPECT_EQ(result.kind, RoundResult::Kind::committed) << "round " << r;
    EXPECT_EQ(result.members, 2u) << "round " << r;
  }
  const Digest want = ref.workers[0]->shared().hash();
  EXPECT_EQ(ref.workers[1]->shared().hash(), want) << "round " << r;
  EXPECT_EQ(a.peer->state_hash(), want) << "round " << r;
  EXPECT_EQ(b.peer->state_hash(), want) << "round " << r;
  EXPECT_EQ(a.peer->state_round(), ref.workers[0]->shared().round());
  EXPECT_TRUE(holds(a, ref.locals[0])) << "round " << r << ": a's buffers hold θ";
  EXPECT_TRUE(holds(b, ref.locals[1])) << "round " << r << ": b's buffers hold θ";
}

TEST(TrainerSparseLoCo, OverASwarmItHoldsTheInProcessStrategysBitsThroughACheckpoint) {
  model::set_compute_threads(1);
  const test::TempDir dir;
  const std::filesystem::path run = write_run_config(dir);
  test::TrackerProcess tracker(dir.path(), "sparse", {"--run.min-peers", "2"}, "127.0.0.1:0",
                               run.string());
  ASSERT_TRUE(tracker.started()) << tracker.log();
  Reference ref(cli::load_train_config(run));

  Trainer a = open_trainer(dir, "a", tracker, run);
  Trainer b = open_trainer(dir, "b", tracker, run);
  EXPECT_EQ(a.peer->strategy(), "sparseloco");
  EXPECT_THROW(a.peer->overlap(), Error) << "SparseLoCo's rounds do not overlap";
  ASSERT_TRUE(a.peer->join(kPatience)) << tracker.log();
  ASSERT_TRUE(b.peer->join(kPatience)) << tracker.log();
  ASSERT_TRUE(holds(a, ref.locals[0])) << "the genesis";
  for (int r = 1; r <= 2; ++r) same_round(a, b, ref, r);

  // a leaves with its e saved; its successor loads it and goes on as worker 0 does.
  ASSERT_GT(sum_of_squares(ref.workers[0]->error().data()), 0.0) << "e holds a residual";
  a.peer->save(dir / "a.ckpt");
  a.peer->leave("restarting");
  a.peer.reset();
  Trainer c = open_trainer(dir, "c", tracker, run);
  c.peer->load(dir / "a.ckpt");
  const std::optional<JoinInfo> joined = c.peer->join(kPatience);
  ASSERT_TRUE(joined) << tracker.log();
  EXPECT_FALSE(joined->fetched) << "the run is still at the file's state";
  EXPECT_EQ(joined->round, 2u);
  for (int r = 3; r <= 4; ++r) same_round(c, b, ref, r);
}

}  // namespace
}  // namespace loco::host
