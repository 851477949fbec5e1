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
  // Multiply-adds ×2 of one forward+backward per token (6·matmul params + attention), for FLOP/s.
  double flops_per_token() const;

 private:
  struct BlockParams {  // tensor indices in the parameter layout
    std::size_t ln1_w, ln1_b, qkv_w, qkv_b, attn_proj_w, attn_proj_b;
    std::size_t ln2_w, ln2_b, fc_w, fc_b, mlp_proj_w, mlp_proj_b;
  };
  struct BlockActs {  // tensor indices in the activation layout
    std::size_t ln1, ln1_mean, ln1_rstd, qkv, probs, atty, res_attn;
    std::size_t ln2, ln2_mean, ln2_rstd, fch, fch_gelu, res_mlp;
  };
  struct TopActs {  // activation tensor indices outside the blocks, and the backward scratch
    std::size_t encoded, lnf, lnf_mean, lnf_rstd, logits, losses;
    std::size_t d_res, d_ln, d_qkv, d_atty, d_fch, d_probs;
  };
  void block_forward(const Arena& params, std::size_t layer, const float* in);
  void block_backward(const Arena& params, Arena& grads, std::size_t layer, const float* in);

  GptConfig config_;
  std::size_t max_batch_;
  std::shared_ptr<const ArenaLayout> layout_;
  std::vector<BlockParams> block_params_;
  std::vector<BlockActs> block_acts_;
  TopActs top_{};
  Arena acts_;  // forward activations and backward scratch, reused every step
  std::vector<std::int32_t> inputs_, targets_;
  std::size_t batch_ = 0, seq_ = 0;  // of the last forward
  bool has_forward_ = false;
};

}  // namespace loco::model
