#pragma once
// A GPT-2-style decoder (as nanoGPT / llm.c):
//   x = wte[tokens] + wpe[positions]
//   per block:  x += attn_proj(causal_attention(qkv(ln_1(x))))
//               x += mlp_proj(gelu(mlp_fc(ln_2(x))))
//   logits = ln_f(x) · wteᵀ   (the LM head is tied to the token embedding)
//   loss = mean cross-entropy
// Parameter names and shapes follow nanoGPT's state dict (Linear weights are [out, in]), so a
// PyTorch model can load the tensors as they are.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "loco/model/model.hpp"

namespace loco::model {

struct GptConfig {
  std::size_t vocab = 256;
  std::size_t context = 128;  // longest sequence (rows of wpe)
  std::size_t n_layer = 4;
  std::size_t n_head = 4;
  std::size_t d_model = 128;  // a multiple of n_head

  // Throws Error(config) naming the bad field.
  void validate() const;
};

// The parameter tensors of a GPT, in arena order: embeddings, then block by block, then ln_f.
std::vector<TensorSpec> gpt_tensor_specs(const GptConfig& config);

// Activations: the `acts_` arena, allocated once for max_batch × context tokens. Per token, in
// floats (d = d_model, H = n_head, T = context):
//   kept for backward, per block     qkv 3d, res_attn d, fch 4d, res_mlp d          =  9d
//     (keeping ln1, ln2 with their mean and rstd, atty, probs and fch_gelu too would be
//      16d + 4 + H·T: 18d + 4 at H·T = 2d as in the 85M GPT, 27.7 KB more a token and block)
//   kept once                        encoded d, logits vocab, losses 1
//   one block's scratch, shared      ln d + 2, atty d, probs H·T, fch_gelu 4d
//                                    d_res d, d_ln d, d_qkv 3d, d_atty d, d_fch 4d, d_probs H·T
// Forward writes each block's LayerNorm, attention and GELU outputs into the scratch; backward
// recomputes them there just before it needs them, with the same calls on the same kept inputs,
// so the loss and gradients are bit-identical to keeping them. The recomputation is one more
// forward of those layers per step: attention's ~1.5·T·d multiply-adds per token and block (plus
// H·T/2 exponentials) beside the ~36·d² of the block's matmuls, forward and backward (0.7% at
// T 128, d 768; 5.6% at T 1024), and three elementwise passes. Measured (bench-train_step, one
// thread, idle machine): a step of the 85M GPT at batch 4 takes ~2% longer; of the default 4
// layers at d 128, batch 16, ~7% (half of it attention's recomputation). A forward alone
// (evaluation) does the same work as before. At batch 4, T 128 and 12 layers the arena is
// 203 MB at d 768 (85M parameters: 2.4 bytes each; 362 MB, 4.2, keeping all) and 271 MB at d 1024
// (151M: 1.8 bytes each; 483 MB, 3.2, keeping all).
class Gpt final : public Model {
 public:
  // Activations are allocated here, once, for batches of up to max_batch × config.context.
  Gpt(const GptConfig& config, std::size_t max_batch);

  const std::shared_ptr<const ArenaLayout>& layout() const override { return layout_; }
  // GPT-2 initialisation: weights N(0, 0.02), residual projections N(0, 0.02/√(2·n_layer)),
  // biases 0, LayerNorm gains 1.
  void init(Arena& params, std::uint64_t seed) const override;
  float forward(const Arena& params, const TokenBatch& batch) override;
  void backward(const Arena& params, Arena& grads) override;

  const GptConfig& config() const { return config_; }
  // Multiply-adds ×2 of one forward+backward per token (6·matmul params + attention), for FLOP/s;
  // backward's recomputation is not counted (the convention of model FLOPs).
  double flops_per_token() const;
  // The activation arena's size in floats (64-byte padding included): the costs above.
  std::size_t activation_floats() const { return acts_.layout().size(); }

 private:
  struct BlockParams {  // tensor indices in the parameter layout
    std::size_t ln1_w, ln1_b, qkv_w, qkv_b, attn_proj_w, attn_proj_b;
    std::size_t ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b;
  };
  struct BlockActs {  // what a block keeps for backward: tensor indices in the activation layout
    std::size_t qkv, res_attn, fch, res_mlp;
  };
  struct Scratch {  // one block's worth, shared by all blocks: forward's outputs, then gradients
    std::size_t ln, ln_mean, ln_rstd, atty, probs, fch_gelu;
    std::size_t d_res, d_ln, d_qkv, d_atty, d_fch, d_probs;
  };
  void block_forward(const Arena& params, std::size_t layer, const float* in);
  void block_backward(const Arena& params, Arena& grads, std::size_t layer, const float* in);
  // The forward stages whose outputs live in the scratch; backward calls them again.
  const float* scratch_layernorm(const Arena& params, std::size_t weight, std::size_t bias,
                                 const float* in);  // ln, ln_mean, ln_rstd
  void scratch_attention(std::size_t layer);        // atty, probs from the block's qkv
  void scratch_gelu(std::size_t layer);             // fch_gelu from the block's fch

  GptConfig config_;
  std::size_t max_batch_;
  std::shared_ptr<const ArenaLayout> layout_;
  std::vector<BlockParams> block_params_;
  std::vector<BlockActs> block_acts_;
  std::size_t encoded_ = 0, logits_ = 0, losses_ = 0;  // activation tensors outside the blocks
  Scratch scratch_{};
  Arena acts_;  // the activations above, reused every step
  std::vector<std::int32_t> inputs_, targets_;
  std::size_t batch_ = 0, seq_ = 0;  // of the last forward
  bool has_forward_ = false;
};

}  // namespace loco::model
