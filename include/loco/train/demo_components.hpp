#pragma once
// DeMo's maths (docs/DESIGN.md §1.4) apart from the strategy driving it (demo.hpp), so a test can
// check one step against a dense computation. Per tensor of the layout, per step:
//
//   δ ← β·δ + lr·g                               contribute(): decoupled momentum
//   q = top-k per chunk of DCT(δ)                  the demo codec (compress/, docs/CODECS.md)
//   message += encode(q)                           indices and values (or signs + a chunk scale)
//   sent = IDCT(decode(q))                         what every other member will read of it
//   δ ← δ − sent                                   forget(), once the group took the message
//   Q = (1/M) Σ_j decode(message_j), j in order    direction(): the mean over the members
//   dir = sign(Q)  (sign(0) = 0)                   (IDCT is linear: the IDCT of the mean)
//   p ← p·(1 − lr·wd) − lr·dir                     apply_demo_update(); wd on matrices only
//
// Removing the decoded message rather than the exact kept coefficients makes the sign mode error
// feedback: what the 1-bit values lost stays in δ. With values=fp32 the two are the same.
//
// A member's message: one codec message per tensor (tensor_messages.hpp), whose decoder checks
// the count against the layout and each length against the bytes left and the codec's bound
// for that tensor before it allocates anything.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/arena.hpp"

namespace loco::train {

struct DemoConfig {
  std::size_t chunk = 64;       // target chunk size per dimension (the largest divisor ≤ it)
  std::size_t topk = 32;        // coefficients kept per chunk
  float beta = 0.999f;          // momentum decay β
  std::string values = "sign";  // how kept values travel: sign (1 bit + a scale per chunk), fp32...
  bool late = false;            // apply each step's direction one step later
  float weight_decay = 0.1f;    // decoupled, on matrices (as AdamW)

  // "demo:chunk=64,topk=32,values=sign"
  std::string codec_spec() const;
  // Throws Error(config) naming the first bad option.
  void validate() const;
};

class DemoComponents {
 public:
  static constexpr std::uint8_t kVersion = 1;

  DemoComponents(std::shared_ptr<const ArenaLayout> layout, const DemoConfig& config);

  // δ ← β·δ + lr·g, then this member's message for δ; `sent` gets what the message decodes to.
  std::vector<std::byte> contribute(Arena& momentum, const Arena& grads, float lr,
                                    Arena& sent) const;
  // δ ← δ − sent (after the group took the message).
  static void forget(Arena& momentum, const Arena& sent);
  // The update direction sign(mean of the decoded parts) into `out`. A part that is malformed or
  // decodes to non-finite values is left out (every member holds the same parts, so every member
  // leaves out the same ones). Returns the number of parts in the mean (0: out is zero).
  std::size_t direction(std::span<const std::vector<std::byte>> parts, Arena& out);
  // Decodes one member's message into `out`. Throws Error(format) naming what is wrong.
  void decode(std::span<const std::byte> message, Arena& out) const;

  const compress::Codec& codec() const { return *codec_; }

 private:
  std::shared_ptr<const ArenaLayout> layout_;
  DemoConfig config_;
  std::unique_ptr<compress::Codec> codec_;
  Arena sum_, scratch_;
};

// p ← p·(1 − lr·wd) − lr·direction, the decay on tensors of rank ≥ 2 only.
void apply_demo_update(Arena& params, const Arena& direction, float lr, float weight_decay);

}  // namespace loco::train
