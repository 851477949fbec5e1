#pragma once
// Inputs the codec tests run every codec on: Gaussian, heavy-tailed, all-zero, constant, and
// tiny sizes that end mid-block and mid-byte.

#include <cmath>
#include <string>
#include <vector>

#include "loco/core/rng.hpp"

namespace loco::compress::testing {

struct Input {
  std::string name;
  std::vector<float> values;
};

inline std::vector<float> gaussian(std::size_t n, std::uint64_t seed, float sigma = 1.0f) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& v : out) v = sigma * rng.normal();
  return out;
}

// Gaussian divided by |Gaussian|^0.8: a few values hundreds of times the typical size.
inline std::vector<float> heavy_tailed(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> out(n);
  for (auto& v : out) v = rng.normal() / std::pow(std::fabs(rng.normal()) + 1e-3f, 0.8f);
  return out;
}

inline std::vector<Input> standard_inputs() {
  return {
      {"gaussian", gaussian(3000, 1)},
      {"heavy_tailed", heavy_tailed(3000, 2)},
      {"zeros", std::vector<float>(1000, 0.0f)},
      {"constant", std::vector<float>(1000, -0.375f)},
      {"tiny_1", {0.25f}},
      {"tiny_7", gaussian(7, 3, 1e-3f)},
      {"tiny_13", gaussian(13, 4)},
      {"empty", {}},
  };
}

}  // namespace loco::compress::testing
