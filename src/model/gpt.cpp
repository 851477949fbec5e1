#include "loco/model/gpt.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/model/layers/attention.hpp"
#include "loco/model/layers/cross_entropy.hpp"
#include "loco/model/layers/embedding.hpp"
#include "loco/model/layers/gelu.hpp"
#include "loco/model/layers/layernorm.hpp"
#include "loco/model/layers/linear.hpp"
#include "tensor_pointer.hpp"
#include "token_checks.hpp"

namespace loco::model {
namespace {

std::string block_name(std::size_t layer, const char* what) {
  return fmt::format("transformer.h.{}.{}", layer, what);
}

// The activation buffers (their costs per token are in gpt.hpp): what each block keeps for
// backward, then one block's scratch that all blocks share.
std::vector<TensorSpec> activation_specs(const GptConfig& cfg, std::size_t max_batch) {
  const std::size_t bt = max_batch * cfg.context;
  const std::size_t c = cfg.d_model;
  const std::vector<std::size_t> probs{max_batch, cfg.n_head, cfg.context, cfg.context};
  std::vector<TensorSpec> specs{{"encoded", {bt, c}}};
  for (std::size_t l = 0; l < cfg.n_layer; ++l) {
    const std::string p = fmt::format("h{}.", l);
    specs.push_back({p + "qkv", {bt, 3 * c}});
    specs.push_back({p + "res_attn", {bt, c}});
    specs.push_back({p + "fch", {bt, 4 * c}});
    specs.push_back({p + "res_mlp", {bt, c}});
  }
  specs.push_back({"logits", {bt, cfg.vocab}});  // probabilities after forward, dlogits in backward
  specs.push_back({"losses", {bt}});
  specs.push_back({"ln", {bt, c}});
  specs.push_back({"ln_mean", {bt}});
  specs.push_back({"ln_rstd", {bt}});
  specs.push_back({"atty", {bt, c}});
  specs.push_back({"probs", probs});
  specs.push_back({"fch_gelu", {bt, 4 * c}});
  specs.push_back({"d_res", {bt, c}});
  specs.push_back({"d_ln", {bt, c}});
  specs.push_back({"d_qkv", {bt, 3 * c}});
  specs.push_back({"d_atty", {bt, c}});
  specs.push_back({"d_fch", {bt, 4 * c}});
  specs.push_back({"d_probs", probs});
  return specs;
}

}  // namespace

void GptConfig::validate() const {
  auto fail = [](const std::string& what) {
    throw Error(ErrorCategory::config, "GPT config: " + what);
  };
  if (vocab < 2 || vocab > (std::size_t{1} << 20)) fail("vocab must be in [2, 2^20]");
  if (context < 1 || context > 8192) fail("context must be in [1, 8192]");
  if (n_layer < 1 || n_layer > 256) fail("n_layer must be in [1, 256]");
  if (n_head < 1 || d_model < 1 || d_model % n_head != 0) {
    fail("d_model (" + std::to_string(d_model) + ") must be a positive multiple of n_head (" +
         std::to_string(n_head) + ")");
  }
  if (d_model > 16384) fail("d_model must be at most 16384");
}

std::vector<TensorSpec> gpt_tensor_specs(const GptConfig& cfg) {
  cfg.validate();
  const std::size_t c = cfg.d_model;
  std::vector<TensorSpec> specs{{"transformer.wte.weight", {cfg.vocab, c}},
                                {"transformer.wpe.weight", {cfg.context, c}}};
  for (std::size_t l = 0; l < cfg.n_layer; ++l) {
    specs.push_back({block_name(l, "ln_1.weight"), {c}});
    specs.push_back({block_name(l, "ln_1.bias"), {c}});
    specs.push_back({block_name(l, "attn.c_attn.weight"), {3 * c, c}});
    specs.push_back({block_name(l, "attn.c_attn.bias"), {3 * c}});
    specs.push_back({block_name(l, "attn.c_proj.weight"), {c, c}});
    specs.push_back({block_name(l, "attn.c_proj.bias"), {c}});
    specs.push_back({block_name(l, "ln_2.weight"), {c}});
    specs.push_back({block_name(l, "ln_2.bias"), {c}});
    specs.push_back({block_name(l, "mlp.c_fc.weight"), {4 * c, c}});
    specs.push_back({block_name(l, "mlp.c_fc.bias"), {4 * c}});
    specs.push_back({block_name(l, "mlp.c_proj.weight"), {c, 4 * c}});
    specs.push_back({block_name(l, "mlp.c_proj.bias"), {c}});
  }
  specs.push_back({"transformer.ln_f.weight", {c}});
  specs.push_back({"transformer.ln_f.bias", {c}});
  return specs;
}

Gpt::Gpt(const GptConfig& config, std::size_t max_batch)
    : config_(config),
      max_batch_(max_batch),
      layout_(std::make_shared<const ArenaLayout>(gpt_tensor_specs(config))),
      acts_(std::make_shared<const ArenaLayout>(activation_specs(config, max_batch))),
      inputs_(max_batch * config.context),
      targets_(max_batch * config.context) {
  if (max_batch < 1) throw Error(ErrorCategory::config, "GPT: the batch size must be at least 1");
  const ArenaLayout& p = *layout_;
  const ArenaLayout& a = acts_.layout();
  auto top = [&](const char* name) { return a.index_of(name); };
  encoded_ = top("encoded");
  logits_ = top("logits");
  losses_ = top("losses");
  scratch_ = Scratch{top("ln"),    top("ln_mean"),  top("ln_rstd"), top("atty"),
                     top("probs"), top("fch_gelu"), top("d_res"),   top("d_ln"),
                     top("d_qkv"), top("d_atty"),   top("d_fch"),   top("d_probs")};
  for (std::size_t l = 0; l < config.n_layer; ++l) {
    auto pi = [&](const char* what) { return p.index_of(block_name(l, what)); };
    block_params_.push_back(
        BlockParams{pi("ln_1.weight"), pi("ln_1.bias"), pi("attn.c_attn.weight"),
                    pi("attn.c_attn.bias"), pi("attn.c_proj.weight"), pi("attn.c_proj.bias"),
                    pi("ln_2.weight"), pi("ln_2.bias"), pi("mlp.c_fc.weight"), pi("mlp.c_fc.bias"),
                    pi("mlp.c_proj.weight"), pi("mlp.c_proj.bias")});
    const std::string h = fmt::format("h{}.", l);
    auto ai = [&](const char* what) { return a.index_of(h + what); };
    block_acts_.push_back(BlockActs{ai("qkv"), ai("res_attn"), ai("fch"), ai("res_mlp")});
  }
}

void Gpt::init(Arena& params, std::uint64_t seed) const {
  LOCO_ASSERT(params.layout() == *layout_, "GPT init: parameters of another layout");
  const float residual_std = 0.02f / std::sqrt(2.0f * static_cast<float>(config_.n_layer));
  // Each tensor draws from a stream of its own, so the compute threads can take them in any order
  // and the bits stay the same: at 151M parameters the draws are most of a peer's time to join.
  const auto tensors = static_cast<std::ptrdiff_t>(layout_->tensor_count());
#pragma omp parallel for schedule(dynamic)
  for (std::ptrdiff_t t = 0; t < tensors; ++t) {
    const auto i = static_cast<std::size_t>(t);
    const std::string& name = layout_->tensor(i).name;
    auto values = params.tensor(i);
    const bool is_bias = name.ends_with(".bias");
    if (name.find(".ln_") != std::string::npos) {
      std::ranges::fill(values, is_bias ? 0.0f : 1.0f);
    } else if (is_bias) {
      std::ranges::fill(values, 0.0f);
    } else {
      const float std = name.ends_with("c_proj.weight") ? residual_std : 0.02f;
      Rng rng(counter_u64(seed, i, 0));  // one stream per tensor
      for (float& v : values) v = std * rng.normal();
    }
  }
}

double Gpt::flops_per_token() const {
  const double c = static_cast<double>(config_.d_model);
  const double l = static_cast<double>(config_.n_layer);
  const double matmul_params = 12.0 * l * c * c + static_cast<double>(config_.vocab) * c;
  // 6 FLOPs per matmul weight (forward 2, backward 4), plus attention's q·kᵀ and P·v.
  return 6.0 * matmul_params + 12.0 * l * static_cast<double>(config_.context) * c;
}

float Gpt::forward(const Arena& params, const TokenBatch& batch) {
  LOCO_ASSERT(params.layout() == *layout_, "GPT forward: parameters of another layout");
  check_batch(batch, max_batch_, config_.context, config_.vocab, "GPT forward");
  batch_ = batch.batch;
  seq_ = batch.seq;
  std::ranges::copy(batch.inputs, inputs_.begin());
  std::ranges::copy(batch.targets, targets_.begin());
  const Index b = static_cast<Index>(batch_), t = static_cast<Index>(seq_);
  const Index c = static_cast<Index>(config_.d_model), v = static_cast<Index>(config_.vocab);

  embedding_forward(ptr(acts_, encoded_), inputs_.data(), ptr(params, 0), ptr(params, 1), b, t, c);
  const float* x = ptr(acts_, encoded_);
  for (std::size_t l = 0; l < config_.n_layer; ++l) {
    block_forward(params, l, x);
    x = ptr(acts_, block_acts_[l].res_mlp);
  }
  const std::size_t last = layout_->tensor_count() - 2;  // ln_f.weight, ln_f.bias
  const float* lnf = scratch_layernorm(params, last, last + 1, x);
  float* logits = ptr(acts_, logits_);
  linear_forward(logits, lnf, ptr(params, 0), nullptr, b * t, c, v);
  has_forward_ = true;
  return cross_entropy_forward(logits, ptr(acts_, losses_), logits, targets_.data(), b * t, v);
}

const float* Gpt::scratch_layernorm(const Arena& params, std::size_t weight, std::size_t bias,
                                    const float* in) {
  float* out = ptr(acts_, scratch_.ln);
  layernorm_forward(out, ptr(acts_, scratch_.ln_mean), ptr(acts_, scratch_.ln_rstd), in,
                    ptr(params, weight), ptr(params, bias), static_cast<Index>(batch_ * seq_),
                    static_cast<Index>(config_.d_model));
  return out;
}

void Gpt::scratch_attention(std::size_t layer) {
  attention_forward(ptr(acts_, scratch_.atty), ptr(acts_, scratch_.probs),
                    ptr(acts_, block_acts_[layer].qkv), static_cast<Index>(batch_),
                    static_cast<Index>(seq_), static_cast<Index>(config_.d_model),
                    static_cast<Index>(config_.n_head));
}

void Gpt::scratch_gelu(std::size_t layer) {
  gelu_forward(ptr(acts_, scratch_.fch_gelu), ptr(acts_, block_acts_[layer].fch),
               static_cast<Index>(batch_ * seq_), static_cast<Index>(4 * config_.d_model));
}

void Gpt::block_forward(const Arena& params, std::size_t layer, const float* in) {
  const BlockParams& p = block_params_[layer];
  const BlockActs& s = block_acts_[layer];
  const Index n = static_cast<Index>(batch_ * seq_), c = static_cast<Index>(config_.d_model);
  const auto w = [&](std::size_t i) { return ptr(params, i); };
  const auto act = [&](std::size_t i) { return ptr(acts_, i); };

  const float* ln1 = scratch_layernorm(params, p.ln1_w, p.ln1_b, in);
  linear_forward(act(s.qkv), ln1, w(p.qkv_w), w(p.qkv_b), n, c, 3 * c);
  scratch_attention(layer);
  linear_forward(act(s.res_attn), act(scratch_.atty), w(p.attn_proj_w), w(p.attn_proj_b), n, c, c);
  MatView(act(s.res_attn), n, c) += ConstMatView(in, n, c);

  const float* ln2 = scratch_layernorm(params, p.ln2_w, p.ln2_b, act(s.res_attn));
  linear_forward(act(s.fch), ln2, w(p.fc_w), w(p.fc_b), n, c, 4 * c);
  scratch_gelu(layer);
  linear_forward(act(s.res_mlp), act(scratch_.fch_gelu), w(p.mlp_proj_w), w(p.mlp_proj_b), n, 4 * c,
                 c);
  MatView(act(s.res_mlp), n, c) += ConstMatView(act(s.res_attn), n, c);
}

void Gpt::backward(const Arena& params, Arena& grads) {
  LOCO_ASSERT(has_forward_, "GPT backward needs a forward first");
  LOCO_ASSERT(grads.layout() == *layout_, "GPT backward: gradients of another layout");
  has_forward_ = false;  // backward turns the probabilities into dlogits
  grads.fill(0.0f);
  const Index b = static_cast<Index>(batch_), t = static_cast<Index>(seq_);
  const Index n = b * t;
  const Index c = static_cast<Index>(config_.d_model), v = static_cast<Index>(config_.vocab);
  float* d_res = ptr(acts_, scratch_.d_res);
  float* d_ln = ptr(acts_, scratch_.d_ln);

  float* logits = ptr(acts_, logits_);
  cross_entropy_backward(logits, logits, targets_.data(), n, v);
  const std::size_t last = layout_->tensor_count() - 2;
  const float* x_last = ptr(acts_, block_acts_.back().res_mlp);
  const float* lnf = scratch_layernorm(params, last, last + 1, x_last);  // recomputed
  linear_backward(d_ln, ptr(grads, 0), nullptr, logits, lnf, ptr(params, 0), n, c, v);
  MatView(d_res, n, c).setZero();
  layernorm_backward(d_res, ptr(grads, last), ptr(grads, last + 1), d_ln, x_last, ptr(params, last),
                     ptr(acts_, scratch_.ln_mean), ptr(acts_, scratch_.ln_rstd), n, c);
  for (std::size_t l = config_.n_layer; l-- > 0;) {
    const float* in = l == 0 ? ptr(acts_, encoded_) : ptr(acts_, block_acts_[l - 1].res_mlp);
    block_backward(params, grads, l, in);
  }
  embedding_backward(ptr(grads, 0), ptr(grads, 1), d_res, inputs_.data(), b, t, c);
}

// On entry d_res holds d(loss)/d(block output); on exit d(loss)/d(block input). Each scratch_*
// call recomputes, from what the block kept, the forward output the next line needs.
void Gpt::block_backward(const Arena& params, Arena& grads, std::size_t layer, const float* in) {
  const BlockParams& p = block_params_[layer];
  const BlockActs& s = block_acts_[layer];
  const Index n = static_cast<Index>(batch_ * seq_), c = static_cast<Index>(config_.d_model);
  const auto w = [&](std::size_t i) { return ptr(params, i); };
  const auto g = [&](std::size_t i) { return ptr(grads, i); };
  const auto act = [&](std::size_t i) { return ptr(acts_, i); };
  float* d_res = act(scratch_.d_res);
  float* d_ln = act(scratch_.d_ln);
  float* d_fch = act(scratch_.d_fch);
  float* d_atty = act(scratch_.d_atty);
  float* d_qkv = act(scratch_.d_qkv);
  const float* ln_mean = act(scratch_.ln_mean);
  const float* ln_rstd = act(scratch_.ln_rstd);

  // MLP: the residual passes d_res through unchanged; the branch adds to it.
  scratch_gelu(layer);
  linear_backward(d_fch, g(p.mlp_proj_w), g(p.mlp_proj_b), d_res, act(scratch_.fch_gelu),
                  w(p.mlp_proj_w), n, 4 * c, c);
  gelu_backward(d_fch, act(s.fch), d_fch, n, 4 * c);
  const float* ln2 = scratch_layernorm(params, p.ln2_w, p.ln2_b, act(s.res_attn));
  linear_backward(d_ln, g(p.fc_w), g(p.fc_b), d_fch, ln2, w(p.fc_w), n, c, 4 * c);
  layernorm_backward(d_res, g(p.ln2_w), g(p.ln2_b), d_ln, act(s.res_attn), w(p.ln2_w), ln_mean,
                     ln_rstd, n, c);

  // Attention, the same way.
  scratch_attention(layer);
  linear_backward(d_atty, g(p.attn_proj_w), g(p.attn_proj_b), d_res, act(scratch_.atty),
                  w(p.attn_proj_w), n, c, c);
  attention_backward(d_qkv, act(scratch_.d_probs), d_atty, act(s.qkv), act(scratch_.probs),
                     static_cast<Index>(batch_), static_cast<Index>(seq_), c,
                     static_cast<Index>(config_.n_head));
  const float* ln1 = scratch_layernorm(params, p.ln1_w, p.ln1_b, in);
  linear_backward(d_ln, g(p.qkv_w), g(p.qkv_b), d_qkv, ln1, w(p.qkv_w), n, c, 3 * c);
  layernorm_backward(d_res, g(p.ln1_w), g(p.ln1_b), d_ln, in, w(p.ln1_w), ln_mean, ln_rstd, n, c);
}

}  // namespace loco::model
