#pragma once
// Seeded random numbers that give the same bits on every platform, compiler and thread count.
// (std:: distributions are implementation-defined, so loco never uses them for shared state.)
//
// - counter_u64(seed, stream, index): counter-based; value `index` of a stream is a pure
//   function of its arguments, so parallel loops can draw without sharing state.
// - Rng: a sequential generator (xoshiro256**) seeded through SplitMix64.

#include <cstdint>

namespace loco {

// SplitMix64's finaliser: a bijective 64-bit mix with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t counter_u64(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(seed ^ mix64(stream)) ^ index);
}

// Uniform float in [0, 1) with 24 random bits (every value exactly representable).
constexpr float to_unit_float(std::uint64_t bits) {
  return static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t next_u64();
  float uniform();                       // [0, 1), 24 bits
  std::uint64_t below(std::uint64_t n);  // uniform in [0, n), unbiased; n > 0
  float normal();                        // standard normal (Box–Muller, computed in double)

 private:
  std::uint64_t s_[4];
};

}  // namespace loco
