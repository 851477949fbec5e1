// The spread from sketches: it estimates the RMS distance of members' parameters from their mean
// per value (what the simulator computes exactly) from 32 projections of each.
#include "loco/proto/parameter_sketch.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "loco/core/rng.hpp"

namespace loco::proto {
namespace {

double exact_spread(const std::vector<std::vector<float>>& thetas) {
  const std::size_t n = thetas.size(), dim = thetas.front().size();
  double squares = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    double mean = 0;
    for (const auto& t : thetas) mean += t[i];
    mean /= static_cast<double>(n);
    for (const auto& t : thetas) squares += (t[i] - mean) * (t[i] - mean);
  }
  return std::sqrt(squares / static_cast<double>(n * dim));
}

TEST(ParameterSketch, TheSpreadOfSketchesEstimatesTheParametersSpread) {
  Rng rng(3);
  const std::size_t dim = 50'000;
  std::vector<float> centre(dim);
  for (float& v : centre) v = rng.normal();
  for (const double apart : {1e-3, 1e-1}) {
    std::vector<std::vector<float>> thetas;
    std::vector<ParameterSketch> sketches;
    for (int p = 0; p < 16; ++p) {
      std::vector<float> t = centre;
      for (float& v : t) v += static_cast<float>(apart * rng.normal());
      sketches.push_back(sketch_parameters(t));
      thetas.push_back(std::move(t));
    }
    const double exact = exact_spread(thetas);
    EXPECT_NEAR(sketch_spread(sketches), exact, 0.15 * exact) << "apart " << apart;
  }
}

TEST(ParameterSketch, EqualParametersHaveNoSpreadAndOneMemberNone) {
  std::vector<float> theta(1000, 0.25f);
  const ParameterSketch s = sketch_parameters(theta);
  const std::vector<ParameterSketch> same(4, s);
  EXPECT_EQ(sketch_spread(same), 0.0);
  EXPECT_EQ(sketch_spread(std::span(same).first(1)), 0.0);
  EXPECT_EQ(sketch_spread({}), 0.0);
  // Every peer computes the same projections: a sketch depends on θ alone.
  EXPECT_EQ(sketch_parameters(theta), s);
}

}  // namespace
}  // namespace loco::proto
