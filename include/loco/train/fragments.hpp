#pragma once
// Streaming DiLoCo's fragments and their schedule (docs/DESIGN.md §1.2).
//
// A fragment is a set of whole layers. The layout's tensors are first cut into layers: maximal
// runs of consecutive tensors with the same layer key, the name up to its first all-digit
// component ("transformer.h.3.attn.c_attn.weight" → "transformer.h.3"; a name without one has the
// key "", so the embeddings form one layer and the final norm another). U layers go to P
// fragments either sequentially (layer u to fragment ⌊u·P/U⌋: consecutive layers together, one
// ArenaRange each) or strided (layer u to fragment u mod P: layers interleaved, one range per
// run of adjacent layers). P must not exceed U.
//
// Balanced, for any model (an external one's names say nothing loco can read): the unit is a
// tensor, and the P fragments are runs of whole tensors in layout order, balanced by size: cut k
// (1 ≤ k < P) goes at the tensor boundary whose floats before it are nearest k/P of the model's
// (each fragment at least one tensor; P must not exceed the tensors). One ArenaRange each.
//
// The schedule of H inner steps per round: fragment p is sent at offset t_p = ⌊H·(p+1)/P⌋ within
// each round (evenly spaced; the last fragment at H, like DiLoCo's round), i.e. after inner
// steps s ≥ t_p with (s − t_p) mod H = 0, and applied τ steps later. τ < H/P (τ·P < H) keeps one
// fragment in flight at a time: fragment p lands before or at the step where p+1 leaves.

#include <cstdint>
#include <string_view>
#include <vector>

#include "loco/core/arena.hpp"

namespace loco::train {

enum class FragmentLayout { sequential, strided, balanced };

// Parses "sequential", "strided" or "balanced"; throws Error(config) otherwise.
FragmentLayout parse_fragment_layout(std::string_view name);

struct Fragment {
  std::vector<ArenaRange> ranges;  // in layout order, disjoint, not adjacent
  std::size_t floats = 0;          // Σ ranges' sizes
};

// The layer of each tensor, 0..U−1, in layout order.
std::vector<std::size_t> tensor_layers(const ArenaLayout& layout);

// P fragments covering every tensor once. Throws Error(config) when P is 0 or above the layers.
std::vector<Fragment> make_fragments(const ArenaLayout& layout, std::size_t count,
                                     FragmentLayout how);

class FragmentSchedule {
 public:
  // Throws Error(config) unless 1 ≤ P ≤ H and τ·P < H.
  FragmentSchedule(std::uint64_t inner_steps, std::size_t fragments, std::uint64_t tau);

  std::uint64_t offset(std::size_t p) const;  // t_p
  // After inner step `step` (1-based): does fragment p leave, or land?
  bool sends(std::size_t p, std::uint64_t step) const;
  bool lands(std::size_t p, std::uint64_t step) const;
  // Is some fragment between sending and landing after `step` (sent, τ not yet run out)?
  bool in_flight(std::uint64_t step) const;

  std::uint64_t inner_steps() const { return h_; }
  std::size_t fragments() const { return p_; }
  std::uint64_t tau() const { return tau_; }

 private:
  bool at(std::uint64_t first, std::uint64_t step) const;

  std::uint64_t h_;
  std::size_t p_;
  std::uint64_t tau_;
};

}  // namespace loco::train
