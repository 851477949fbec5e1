#pragma once
// A small next-token MLP for fast tests of everything above the model interface:
//   e = embed[token];  h = gelu(e · fcᵀ + fc_b);  logits = h · outᵀ + out_b;  cross-entropy.
// It sees one token of context (a bigram model), so on an order-1 Markov source it can reach the
// entropy rate.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "loco/model/model.hpp"

namespace loco::model {

struct MlpConfig {
  std::size_t vocab = 16;
  std::size_t d_embed = 16;
  std::size_t d_hidden = 32;
  std::size_t context = 16;  // longest sequence accepted (rows are independent)

  void validate() const;  // throws Error(config)
};

class Mlp final : public Model {
 public:
  Mlp(const MlpConfig& config, std::size_t max_batch);

  const std::shared_ptr<const ArenaLayout>& layout() const override { return layout_; }
  // Weights N(0, 1/√fan_in), biases 0.
  void init(Arena& params, std::uint64_t seed) const override;
  float forward(const Arena& params, const TokenBatch& batch) override;
  void backward(const Arena& params, Arena& grads) override;

 private:
  MlpConfig config_;
  std::size_t max_batch_;
  std::shared_ptr<const ArenaLayout> layout_;
  Arena acts_;  // embedded, hidden, hidden_gelu, logits, losses, d_hidden, d_embedded
  std::vector<std::int32_t> inputs_, targets_;
  std::size_t rows_ = 0;  // tokens in the last forward
  bool has_forward_ = false;
};

}  // namespace loco::model
