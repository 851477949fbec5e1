#pragma once
// SparseLoCo's maths (Sarfi, Thérien, Lidin, Belilovsky 2025; docs/STRATEGIES.md) apart from the
// strategy driving it (sparseloco.hpp), so a test can check a round against a dense computation.
// Per round, after H inner AdamW steps, per member i:
//
//   Δ_i = θ − θ_i                                the pseudo-gradient (old minus new, as DiLoCo's)
//   e_i ← β·e_i + Δ_i                            contribute(): the error-feedback accumulator
//   message_i = chunktopk(e_i)                   per tensor: each chunk of c values keeps its k
//                                                largest |e|, values in b bits with a scale per
//                                                chunk (compress/, docs/CODECS.md)
//   sent_i = decode(message_i)                   what every other member reads of it
//   e_i ← e_i − sent_i                           forget(), once the round committed
//   n_j = ‖decode(message_j)‖, m = lower median of the n_j      aggregate(): robust mean
//   u_j = decode(message_j)·min(1, clip·m / n_j)                (clip = 0: no clipping)
//   U = (1/M) Σ_j u_j, j in member order
//   θ ← θ − outer_lr·U                           apply_sparseloco_update()
//
// Removing the decoded message (not the exact kept values) keeps what the 2-bit values lost in e.
// Every member holds every message, so every member clips the same ones by the same bound: a
// member whose message is malformed, not finite, or larger than clip × the median norm moves θ by
// at most outer_lr·clip·m / M (in L2), whatever it sends, as long as fewer than half the members
// lie (then m is an honest member's norm or below).
//
// A member's message: one codec message per tensor (tensor_messages.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/arena.hpp"

namespace loco::train {

struct SparseLoCoConfig {
  std::uint64_t inner_steps = 20;  // H
  float beta = 0.95f;              // error-feedback decay β
  std::size_t chunk = 4096;        // values per chunk (≤ 65536: u16 chunk-local indices)
  std::size_t topk = 64;  // kept per chunk (1.56% at 64 of 4096), a multiple of 8: the values
                          // codec's blocks of k, one scale per chunk
  unsigned bits = 2;      // kept values in 2, 4 or 8 bits (int2, int4, int8)
  float outer_lr = 1.0f;  // θ ← θ − outer_lr·U
  float clip = 1.0f;      // a message's norm ≤ clip × the median's; 0: no clipping
  unsigned zstd = 0;      // zstd level (1–19) of each tensor's message; 0: none. Lossless: the
                          // same bits of θ and e, fewer bytes (the u16 indices' high bytes)

  // "chunktopk:chunk=4096,topk=64,values=int2", then "+zstd:level=<zstd>" if zstd > 0
  std::string codec_spec() const;
  // Throws Error(config) naming the first bad option.
  void validate() const;
};

class SparseLoCoComponents {
 public:
  static constexpr std::uint8_t kVersion = 1;

  SparseLoCoComponents(std::shared_ptr<const ArenaLayout> layout, const SparseLoCoConfig& config);

  // e ← β·e + (θ − θ_local), then this member's message for e; `sent` gets what it decodes to.
  std::vector<std::byte> contribute(Arena& error, const Arena& theta, const Arena& local,
                                    Arena& sent) const;
  // e ← e − sent (after the round committed).
  static void forget(Arena& error, const Arena& sent);
  // The clipped mean U of the decoded parts into `out` (the class comment). A part that is
  // malformed or decodes to non-finite values is left out (every member holds the same parts, so
  // every member leaves out the same ones). Returns the number of parts in the mean (0: out is
  // zero). Cost: each part decoded twice (its norm, then its share), P floats each.
  std::size_t aggregate(std::span<const std::vector<std::byte>> parts, Arena& out);
  // Parts of the last aggregate() scaled down by the clip.
  std::size_t last_clipped() const { return clipped_; }
  // Decodes one member's message into `out`. Throws Error(format) naming what is wrong.
  void decode(std::span<const std::byte> message, Arena& out) const;

 private:
  // The norm of the decoded part, or a negative number if it is left out.
  double norm_of(std::span<const std::byte> part);

  std::shared_ptr<const ArenaLayout> layout_;
  SparseLoCoConfig config_;
  std::unique_ptr<compress::Codec> codec_;
  Arena sum_, scratch_;
  std::size_t clipped_ = 0;
};

// θ ← θ − outer_lr·U.
void apply_sparseloco_update(Arena& theta, const Arena& mean, float outer_lr);

}  // namespace loco::train
