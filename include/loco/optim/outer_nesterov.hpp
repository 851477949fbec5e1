#pragma once
// The outer optimizer of DiLoCo (docs/DESIGN.md §1.1): Nesterov SGD on the pseudo-gradient
// Δ = θ_old − θ_new averaged over the round's group, with the sign exactly as written there:
//   v ← μ·v + Δ
//   θ ← θ − η·(Δ + μ·v)
// so a positive Δ (the inner steps moved θ down) moves θ down. η = 0.7 and μ = 0.9 by default.
// Every member applies it to the same θ, v and mean Δ and gets the same bits, on every build loco
// ships: each element is computed on its own, in float, with no fused multiply-add (the build
// turns contraction off: CMakeLists.txt).

#include <span>

namespace loco::optim {

struct OuterNesterovConfig {
  float lr = 0.7f;        // η
  float momentum = 0.9f;  // μ

  void validate() const;  // throws Error(config)
};

// One outer step over spans of equal size: θ, its momentum v, and the mean pseudo-gradient Δ.
void outer_nesterov_step(const OuterNesterovConfig& config, std::span<float> theta,
                         std::span<float> momentum, std::span<const float> delta);
// The same step from θ and v, left as they are, into θ' and v' (either output may be empty: not
// wanted; an output may be its input): what outer_nesterov_step leaves, bit for bit. DiLoCo's
// preview and tentative state read the shared θ, v this way without copying them.
void outer_nesterov_step_to(const OuterNesterovConfig& config, std::span<const float> theta,
                            std::span<const float> momentum, std::span<const float> delta,
                            std::span<float> theta_out, std::span<float> momentum_out);

}  // namespace loco::optim
