#include "loco/core/rng.hpp"

#include <cmath>
#include <numbers>

#include "loco/core/assert.hpp"

namespace loco {
namespace {
constexpr std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& word : s_) {
    word = mix64(x);
    x += 0x9e3779b97f4a7c15ULL;
  }
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

float Rng::uniform() {
  return to_unit_float(next_u64());
}

std::uint64_t Rng::below(std::uint64_t n) {
  LOCO_ASSERT(n > 0, "Rng::below(0)");
  // Rejection sampling: draw until the value falls in the largest multiple of n.
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
  std::uint64_t x = next_u64();
  while (x >= limit) x = next_u64();
  return x % n;
}

float Rng::normal() {
  // 53-bit uniforms; u1 in (0, 1] so the log is finite.
  const double u1 = static_cast<double>((next_u64() >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

}  // namespace loco
