#include "loco/model/mlp.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/layers/cross_entropy.hpp"
#include "loco/model/layers/embedding.hpp"
#include "loco/model/layers/gelu.hpp"
#include "loco/model/layers/linear.hpp"
#include "tensor_pointer.hpp"
#include "token_checks.hpp"

namespace loco::model {
namespace {

// Parameter and activation tensor indices, in layout order.
enum Param : std::size_t { kEmbed, kFcW, kFcB, kOutW, kOutB };
enum Act : std::size_t { kEmbedded, kHidden, kHiddenGelu, kLogits, kLosses, kDHidden, kDEmbedded };

std::vector<TensorSpec> activation_specs(const MlpConfig& cfg, std::size_t rows) {
  return {{"embedded", {rows, cfg.d_embed}},
          {"hidden", {rows, cfg.d_hidden}},
          {"hidden_gelu", {rows, cfg.d_hidden}},
          {"logits", {rows, cfg.vocab}},
          {"losses", {rows}},
          {"d_hidden", {rows, cfg.d_hidden}},
          {"d_embedded", {rows, cfg.d_embed}}};
}

}  // namespace

void MlpConfig::validate() const {
  if (vocab < 2 || d_embed < 1 || d_hidden < 1 || context < 1) {
    throw Error(ErrorCategory::config,
                "MLP config: vocab must be at least 2 and every size at least 1");
  }
}

Mlp::Mlp(const MlpConfig& config, std::size_t max_batch)
    : config_((config.validate(), config)),
      max_batch_(max_batch),
      layout_(std::make_shared<const ArenaLayout>(
          std::vector<TensorSpec>{{"embed.weight", {config.vocab, config.d_embed}},
                                  {"fc.weight", {config.d_hidden, config.d_embed}},
                                  {"fc.bias", {config.d_hidden}},
                                  {"out.weight", {config.vocab, config.d_hidden}},
                                  {"out.bias", {config.vocab}}})),
      acts_(std::make_shared<const ArenaLayout>(
          activation_specs(config, std::max<std::size_t>(max_batch, 1) * config.context))),
      inputs_(max_batch * config.context),
      targets_(max_batch * config.context) {
  if (max_batch < 1) throw Error(ErrorCategory::config, "MLP: the batch size must be at least 1");
}

void Mlp::init(Arena& params, std::uint64_t seed) const {
  LOCO_ASSERT(params.layout() == *layout_, "MLP init: parameters of another layout");
  for (std::size_t i = 0; i < layout_->tensor_count(); ++i) {
    const TensorInfo& t = layout_->tensor(i);
    auto values = params.tensor(i);
    if (t.shape.size() < 2) {
      std::ranges::fill(values, 0.0f);
      continue;
    }
    const float std = i == kEmbed ? 1.0f : 1.0f / std::sqrt(static_cast<float>(t.shape[1]));
    Rng rng(counter_u64(seed, i, 0));
    for (float& v : values) v = std * rng.normal();
  }
}

float Mlp::forward(const Arena& params, const TokenBatch& batch) {
  LOCO_ASSERT(params.layout() == *layout_, "MLP forward: parameters of another layout");
  check_batch(batch, max_batch_, config_.context, config_.vocab, "MLP forward");
  rows_ = batch.batch * batch.seq;
  std::ranges::copy(batch.inputs, inputs_.begin());
  std::ranges::copy(batch.targets, targets_.begin());
  const Index n = static_cast<Index>(rows_), e = static_cast<Index>(config_.d_embed),
              h = static_cast<Index>(config_.d_hidden), v = static_cast<Index>(config_.vocab);

  embedding_forward(ptr(acts_, kEmbedded), inputs_.data(), ptr(params, kEmbed), nullptr, n, 1, e);
  linear_forward(ptr(acts_, kHidden), ptr(acts_, kEmbedded), ptr(params, kFcW), ptr(params, kFcB),
                 n, e, h);
  gelu_forward(ptr(acts_, kHiddenGelu), ptr(acts_, kHidden), n, h);
  linear_forward(ptr(acts_, kLogits), ptr(acts_, kHiddenGelu), ptr(params, kOutW),
                 ptr(params, kOutB), n, h, v);
  has_forward_ = true;
  return cross_entropy_forward(ptr(acts_, kLogits), ptr(acts_, kLosses), ptr(acts_, kLogits),
                               targets_.data(), n, v);
}

void Mlp::backward(const Arena& params, Arena& grads) {
  LOCO_ASSERT(has_forward_, "MLP backward needs a forward first");
  LOCO_ASSERT(grads.layout() == *layout_, "MLP backward: gradients of another layout");
  has_forward_ = false;
  grads.fill(0.0f);
  const Index n = static_cast<Index>(rows_), e = static_cast<Index>(config_.d_embed),
              h = static_cast<Index>(config_.d_hidden), v = static_cast<Index>(config_.vocab);

  cross_entropy_backward(ptr(acts_, kLogits), ptr(acts_, kLogits), targets_.data(), n, v);
  linear_backward(ptr(acts_, kDHidden), ptr(grads, kOutW), ptr(grads, kOutB), ptr(acts_, kLogits),
                  ptr(acts_, kHiddenGelu), ptr(params, kOutW), n, h, v);
  gelu_backward(ptr(acts_, kDHidden), ptr(acts_, kHidden), ptr(acts_, kDHidden), n, h);
  linear_backward(ptr(acts_, kDEmbedded), ptr(grads, kFcW), ptr(grads, kFcB), ptr(acts_, kDHidden),
                  ptr(acts_, kEmbedded), ptr(params, kFcW), n, e, h);
  embedding_backward(ptr(grads, kEmbed), nullptr, ptr(acts_, kDEmbedded), inputs_.data(), n, 1, e);
}

}  // namespace loco::model
