#pragma once
// How far apart the members' parameters are, from 128 bytes a member (gossip mode's spread on the
// tracker's /status and /metrics, docs/DESIGN.md §1.6). A peer sends a sketch of its θ with its
// heartbeat: kSketchSize random projections s_j = Σ_i σ_j(i)·θ_i / √dim, σ_j(i) = ±1 from a hash
// of i that every peer computes alike. Projections keep distances on average
// (E‖s(a) − s(b)‖² = kSketchSize·‖a − b‖² / dim), so the tracker gets the spread, the RMS over
// members of ‖θ_p − θ̄‖ / √dim, without the parameters: sketch_spread. Its relative error is about
// 1/√(2·kSketchSize·members): ~9% for 2 members, ~3% for 16.

#include <array>
#include <cstddef>
#include <span>

namespace loco::proto {

inline constexpr std::size_t kSketchSize = 32;
using ParameterSketch = std::array<float, kSketchSize>;

// One pass over θ; 32 additions an element.
ParameterSketch sketch_parameters(std::span<const float> theta);

// The spread of the members whose sketches these are; 0 for fewer than two.
double sketch_spread(std::span<const ParameterSketch> sketches);

}  // namespace loco::proto
