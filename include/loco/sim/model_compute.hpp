#pragma once
// The real inner loop for a few tens of simulated peers (compute_model.hpp): a small model of a
// TrainConfig (configs/swarm-tiny.toml's GPT, say) trained by train::InnerLoop, AdamW and all.
// Peer i reads shard i mod `shards` of the corpus and keeps its own loop (its AdamW moments, its
// data position, its step count for the schedule) across phases, as a volunteer's process does;
// a phase loads θ, runs H steps and returns θ − θ_H. The loss is the validation loss of θ.
//
// Deterministic: the simulator is one thread and a peer's phases run in its event order, so the
// same seed gives the same bits (model::set_compute_threads fixes the thread count, and with it
// the bits, before the first phase).

#include <map>
#include <memory>

#include "loco/sim/compute_model.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/inner_loop.hpp"
#include "loco/train/train_config.hpp"

namespace loco::sim {

class ModelCompute final : public ComputeModel {
 public:
  // config.strategy.diloco_h is H and config.strategy.outer the outer step; config.train.steps
  // sets the length of the learning-rate schedule each peer follows.
  ModelCompute(train::TrainConfig config, std::uint32_t shards);

  std::size_t dim() const override { return evaluator_->params().data().size(); }
  std::uint32_t inner_steps() const override {
    return static_cast<std::uint32_t>(config_.strategy.diloco_h);
  }
  const optim::OuterNesterovConfig& outer() const override { return config_.strategy.outer; }
  std::vector<float> genesis() const override;  // the parameters config.train.seed gives
  std::vector<float> pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                     std::uint64_t phase, std::uint32_t steps) override;
  float loss(std::span<const float> theta) override;

 private:
  train::InnerLoop& loop_of(std::uint64_t peer);

  train::TrainConfig config_;
  std::uint32_t shards_;
  train::Corpus corpus_;
  std::unique_ptr<train::InnerLoop> evaluator_;
  std::vector<float> genesis_;
  std::map<std::uint64_t, std::unique_ptr<train::InnerLoop>> loops_;
};

}  // namespace loco::sim
