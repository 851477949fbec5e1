#include "loco/train/inner_loop.hpp"

#include <algorithm>
#include <span>

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"
#include "loco/train/genesis.hpp"

namespace loco::train {
namespace {

model::TokenBatch view(const data::Batch& b) {
  return model::TokenBatch{b.inputs, b.targets, b.batch_size, b.context};
}

// The batch's first `rows` windows.
model::TokenBatch view(const data::Batch& b, std::uint32_t rows) {
  const std::size_t cells = std::size_t{rows} * b.context;
  return model::TokenBatch{std::span(b.inputs).first(cells), std::span(b.targets).first(cells),
                           rows, b.context};
}

// A dataset's training tokens are read in the order of a file that arrives in pieces, its
// manifest shards (data/batch_sampler.hpp), whether a peer fetches them or holds them all: a
// fetching peer and one with a local copy draw the same batches.
data::SamplerConfig sampler_config(const TrainConfig& config, const Corpus& corpus,
                                   data::ShardSpec shard) {
  return data::SamplerConfig{
      .batch_size = config.train.batch,
      .context = static_cast<std::uint32_t>(config.model.gpt.context),
      .seed = config.train.seed,
      .shard = shard,
      .piece_tokens = corpus.manifest() != nullptr ? corpus.manifest()->shard_tokens : 0};
}

optim::LrSchedule schedule_of(const TrainConfig& config) {
  optim::LrSchedule s = config.lr;
  s.total_steps = config.train.steps;
  return s;
}

// The seed of the validation windows' shuffle: a constant, so the set never changes with a run's
// settings other than its context.
constexpr std::uint64_t kValidationSeed = 0x76616c6964;  // "valid"
// The stream of the stand-in order's seed (stand_in()).
constexpr std::uint64_t kStandInStream = 0x7374616e64;  // "stand"

}  // namespace

InnerLoop::InnerLoop(const TrainConfig& config, const Corpus& corpus)
    : config_(config),
      corpus_(corpus),
      model_(make_model(config)),
      params_(model_->layout()),
      grads_(model_->layout()),
      schedule_(schedule_of(config)) {
  if (!corpus.train().empty())
    sampler_.emplace(corpus.train(), sampler_config(config, corpus, config.data.shard));
  if (config.strategy.steps_with_adamw()) optimizer_.emplace(model_->layout(), config.adamw);
  initial_parameters(config, *model_, params_);
}

optim::AdamW& InnerLoop::optimizer() {
  LOCO_ASSERT(optimizer_, "this strategy does not step with AdamW");
  return *optimizer_;
}

const optim::AdamW& InnerLoop::optimizer() const {
  LOCO_ASSERT(optimizer_, "this strategy does not step with AdamW");
  return *optimizer_;
}

data::BatchSampler& InnerLoop::sampler() {
  LOCO_ASSERT(sampler_, "no training tokens yet (set_tokens)");
  return *sampler_;
}

void InnerLoop::set_shard(data::ShardSpec shard) {
  stand_in_.reset();
  sampler_.emplace(corpus_.train(), sampler_config(config_, corpus_, shard));
  held_memory_.reset();
}

void InnerLoop::set_tokens(data::HeldTokens held, data::ShardSpec shard,
                           std::shared_ptr<const void> memory) {
  if (sampler_ && sampler_->shard() == shard) {
    // More of the shard it reads: the cursor stays (the order does not change). A feed that
    // started the shard again (assigned away and back) offers less at first: kept until it offers
    // more.
    if (held.tokens.size() < sampler_->held().tokens.size()) return;
    if (held.tokens.data() != sampler_->held().tokens.data()) stand_in_.reset();  // its memory goes
    sampler_->hold(held);
  } else {
    stand_in_.reset();
    sampler_.emplace(held, sampler_config(config_, corpus_, shard));
  }
  held_memory_ = std::move(memory);  // after the new sampler: the old one's memory may go now
}

void InnerLoop::stand_in(bool on) {
  if (!on) {
    stand_in_.reset();
    return;
  }
  if (stand_in_) return;
  // The part held, as a file of its own read whole.
  const data::HeldTokens held = sampler().held();
  const data::TokenRange range = sampler().range();
  data::SamplerConfig own = sampler().config();
  own.seed = counter_u64(own.seed, kStandInStream, 0);
  own.shard = {0, 1};
  own.piece_tokens = 0;
  stand_in_.emplace(held.tokens.subspan(range.begin - held.first, range.end - range.begin), own);
}

float InnerLoop::forward_backward() {
  (stand_in_ ? *stand_in_ : sampler()).next(batch_);
  const float loss = model_->forward(params_, view(batch_));
  model_->backward(params_, grads_);
  return loss;
}

float InnerLoop::optimizer_step() {
  const float norm = optimizer().step(params_, grads_, learning_rate());
  ++steps_;
  return norm;
}

float InnerLoop::evaluate() {
  // One fixed shuffle of the whole validation split, not the training seed's: runs of different
  // seeds (or peers of different shards) are judged on the same windows.
  data::SamplerConfig validation = sampler_config(config_, corpus_, data::ShardSpec{0, 1});
  validation.seed = kValidationSeed;
  validation.piece_tokens = 0;  // held whole
  data::BatchSampler sampler(corpus_.validation(), validation);
  data::Batch batch;
  double total = 0;
  for (std::uint32_t left = config_.train.eval_windows; left > 0;) {
    sampler.next(batch);
    // The sampler's order does not depend on its batch size: the last batch's first windows are
    // the next ones a smaller batch would have drawn.
    const std::uint32_t windows = std::min(left, batch.batch_size);
    total += static_cast<double>(model_->forward(params_, view(batch, windows))) * windows;
    left -= windows;
  }
  return static_cast<float>(total / config_.train.eval_windows);
}

double InnerLoop::tokens_per_step() const {
  return static_cast<double>(config_.train.batch) * static_cast<double>(config_.model.gpt.context);
}

}  // namespace loco::train
