#include "loco/sim/model_compute.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::sim {

ModelCompute::ModelCompute(train::TrainConfig config, std::uint32_t shards)
    : config_(std::move(config)),
      shards_(shards),
      corpus_(config_.data, static_cast<std::uint32_t>(config_.model.gpt.vocab)) {
  config_.validate();
  if (shards_ == 0)
    throw Error(ErrorCategory::invalid_argument, "ModelCompute: shards must be >= 1");
  evaluator_ = std::make_unique<train::InnerLoop>(config_, corpus_);
  const std::span<const float> params = evaluator_->params().data();
  genesis_.assign(params.begin(), params.end());
}

std::vector<float> ModelCompute::genesis() const {
  return genesis_;
}

train::InnerLoop& ModelCompute::loop_of(std::uint64_t peer) {
  std::unique_ptr<train::InnerLoop>& loop = loops_[peer];
  if (!loop) {
    loop = std::make_unique<train::InnerLoop>(config_, corpus_);
    loop->set_shard(data::ShardSpec{static_cast<std::uint32_t>(peer % shards_), shards_});
  }
  return *loop;
}

std::vector<float> ModelCompute::pseudo_gradient(std::span<const float> theta, std::uint64_t peer,
                                                 std::uint64_t /*phase: the loop's own order*/,
                                                 std::uint32_t steps) {
  train::InnerLoop& loop = loop_of(peer);
  const std::span<float> params = loop.params().data();
  LOCO_ASSERT(theta.size() == params.size(), "θ of another model");
  std::copy(theta.begin(), theta.end(), params.begin());
  for (std::uint32_t s = 0; s < steps; ++s) {
    loop.forward_backward();
    loop.optimizer_step();
  }
  std::vector<float> delta(theta.size());
  for (std::size_t j = 0; j < delta.size(); ++j) delta[j] = theta[j] - params[j];
  return delta;
}

float ModelCompute::loss(std::span<const float> theta) {
  const std::span<float> params = evaluator_->params().data();
  LOCO_ASSERT(theta.size() == params.size(), "θ of another model");
  std::copy(theta.begin(), theta.end(), params.begin());
  return evaluator_->evaluate();
}

}  // namespace loco::sim
