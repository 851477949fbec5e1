#include "loco/data/window_order.hpp"

#include "loco/core/assert.hpp"
#include "loco/core/rng.hpp"

namespace loco::data {

namespace {
constexpr int kRounds = 4;
}

WindowOrder::WindowOrder(std::uint64_t n, std::uint64_t key) : n_(n), key_(key) {
  LOCO_ASSERT(n >= 1 && n <= (std::uint64_t{1} << 62), "WindowOrder size out of range");
  int bits = 2;
  while ((std::uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
}

std::uint64_t WindowOrder::permute_domain(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (int round = 0; round < kRounds; ++round) {
    const std::uint64_t mixed = left ^ (counter_u64(key_, round, right) & half_mask_);
    left = right;
    right = mixed;
  }
  return (left << half_bits_) | right;
}

std::uint64_t WindowOrder::operator[](std::uint64_t i) const {
  LOCO_DEBUG_ASSERT(i < n_, "WindowOrder index out of range");
  std::uint64_t x = permute_domain(i);
  while (x >= n_) x = permute_domain(x);
  return x;
}

}  // namespace loco::data
