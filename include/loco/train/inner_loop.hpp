#pragma once
// The inner loop every peer runs (llm.c style): one model, its parameters and gradients, AdamW
// with its learning-rate schedule, and a sampler over this process's shard of the training
// tokens. A step is forward_backward() then optimizer_step(); a strategy (strategy.hpp) looks at
// the gradients between the two and at the parameters after them.
// Memory, P parameters: θ and its gradient (8P bytes), AdamW's two moments (8P; none under DeMo,
// StrategySection::steps_with_adamw), and the model's activations for one batch.

#include <cstdint>
#include <memory>
#include <optional>

#include "loco/core/arena.hpp"
#include "loco/data/batch_sampler.hpp"
#include "loco/model/model.hpp"
#include "loco/optim/adamw.hpp"
#include "loco/optim/schedule.hpp"
#include "loco/train/corpus.hpp"
#include "loco/train/train_config.hpp"

namespace loco::train {

class InnerLoop {
 public:
  // The model of `config.model`, parameters initialised from config.train.seed (or read from
  // config.train.init, init_params.hpp), AdamW, and a
  // sampler over `corpus`'s training tokens for config.data.shard. `corpus` outlives the loop.
  // A corpus without training tokens (a peer's, whose shard arrives later: fetch/shard_feed.hpp)
  // leaves the loop without a sampler until set_tokens().
  InnerLoop(const TrainConfig& config, const Corpus& corpus);

  // One batch forward and backward: the gradients are in grads(); returns the mean loss.
  float forward_backward();
  // AdamW on grads() at the scheduled learning rate; counts the step. Returns the gradient norm.
  // Only where the strategy steps with AdamW (has_optimizer()).
  float optimizer_step();
  // Mean validation loss over the first eval_windows windows of one fixed order of the
  // validation split, read in batches of the training batch: the same windows whatever the batch.
  float evaluate();

  Arena& params() { return params_; }
  const Arena& params() const { return params_; }
  Arena& grads() { return grads_; }
  bool has_optimizer() const { return optimizer_.has_value(); }
  optim::AdamW& optimizer();  // only if has_optimizer()
  const optim::AdamW& optimizer() const;
  bool has_sampler() const { return sampler_.has_value(); }
  data::BatchSampler& sampler();  // only if has_sampler()
  // Reads another shard of the corpus from now on (the tracker assigns a peer its shard when it
  // joins).
  void set_shard(data::ShardSpec shard);
  // Reads `shard` of the tokens `held` holds from now on (data/batch_sampler.hpp), in memory that
  // `memory` keeps alive until the next set_tokens(). More of the shard it reads keeps the
  // sampler's cursor (BatchSampler::hold): the batches do not depend on when the tokens came;
  // fewer tokens of it than held are ignored.
  void set_tokens(data::HeldTokens held, data::ShardSpec shard, std::shared_ptr<const void> memory);
  // Trains on the tokens the sampler holds in an order of their own (another seed, no pieces),
  // from now until stand_in(false), when the sampler's next batch is not held and cannot be had
  // yet (a piece of the shard no source gives: loco-peer's data feed). The sampler's cursor stays
  // where it was: stand_in(false) goes back to the shard's order there.
  void stand_in(bool on);
  bool standing_in() const { return stand_in_.has_value(); }
  const std::shared_ptr<const ArenaLayout>& layout() const { return model_->layout(); }
  std::uint64_t steps() const { return steps_; }  // optimizer steps done
  void set_steps(std::uint64_t steps) { steps_ = steps; }
  // Where the next steps are in the learning-rate schedule: steps() unless a strategy places them
  // elsewhere (DiLoCo's rounds bounded by time follow the run's progress, diloco.hpp).
  std::uint64_t schedule_step() const { return schedule_step_.value_or(steps_); }
  void set_schedule_step(std::uint64_t step) { schedule_step_ = step; }
  float learning_rate() const { return schedule_.at(schedule_step()); }
  double tokens_per_step() const;

 private:
  const TrainConfig& config_;
  const Corpus& corpus_;
  std::unique_ptr<model::Model> model_;
  Arena params_, grads_;
  std::optional<optim::AdamW> optimizer_;
  optim::LrSchedule schedule_;
  std::optional<data::BatchSampler> sampler_;
  std::optional<data::BatchSampler> stand_in_;  // stand_in()'s
  std::shared_ptr<const void> held_memory_;     // the tokens of set_tokens()
  data::Batch batch_;
  std::uint64_t steps_ = 0;
  std::optional<std::uint64_t> schedule_step_;
};

}  // namespace loco::train
