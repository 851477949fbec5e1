#pragma once
// A seeded permutation of 0..n-1 that needs no memory: element i of the order is computed on
// demand, so a sampler can shuffle millions of windows per epoch without allocating and can
// resume at any position in O(1).
//
// It is a 4-round Feistel network over the smallest even number of bits that covers n, keyed by
// counter_u64(key, round, half), restricted to 0..n-1 by cycle walking (re-apply until the value
// lands below n; the domain is < 4n, so a few rounds are expected). A Feistel network is a
// bijection for any round function, and cycle walking keeps it one on 0..n-1.

#include <cstdint>

namespace loco::data {

class WindowOrder {
 public:
  // n ≥ 1 elements; `key` selects the permutation (e.g. derived from seed, shard and epoch).
  WindowOrder(std::uint64_t n, std::uint64_t key);

  std::uint64_t size() const { return n_; }
  std::uint64_t operator[](std::uint64_t i) const;  // i < size()

 private:
  std::uint64_t permute_domain(std::uint64_t x) const;

  std::uint64_t n_;
  std::uint64_t key_;
  int half_bits_;
  std::uint64_t half_mask_;
};

}  // namespace loco::data
