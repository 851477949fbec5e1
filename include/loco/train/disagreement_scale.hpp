#pragma once
// An outer step scaled by how much the members' pseudo-gradients disagree: an experiment of
// docs/EXPERIMENTS.md section 6, in the in-process group only (bench-workers
// --outer-disagreement-block), not in the swarm's rounds.
//
// Each member's AdamW divides its step by the root of its own second moment. Where a gradient is
// mostly noise, a member's batch of b holds M× the noise variance of the M members' batch of M·b
// together, so the mean of the M members' steps is data-parallel's step shrunk by up to √M. Per
// block of the parameters, the members' mean squared norm over the mean's squared norm measures
// how much: M where the members' Δ are independent noise, 1 where they agree. Scaling the block of
// the mean by the root of that ratio gives the shrinkage back. The scaled block is never longer
// than the members' root-mean-square block (|mean|² ≤ their mean |Δ_i|² always), so no member's
// bound on its norm is exceeded. Over a network it would cost one number a block a member (0.4%
// of an int8 Δ at blocks of 1,024), or nothing where one owner holds every member's block.

#include <cstddef>
#include <span>
#include <vector>

namespace loco::train {

// Scales each block of `block` values of `mean` (the members' mean Δ, in place) by
// √(mean over members of |Δ_i|² / |mean|²) in that block, clamped to [1, √M]; a block whose mean
// is zero stays zero. The last block may be shorter. Every member given the same `deltas` in the
// same order computes the same bits.
void scale_by_disagreement(std::span<float> mean, std::span<const std::vector<float>> deltas,
                           std::size_t block);

}  // namespace loco::train
