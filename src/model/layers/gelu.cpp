#include "loco/model/layers/gelu.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace loco::model {
namespace {

const float kSqrt2OverPi = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
constexpr float kCubic = 0.044715f;
constexpr Index kChunk = 64;
// Stack storage for up to kChunk values: no heap allocation inside the step.
using ChunkArray = Eigen::Array<float, Eigen::Dynamic, 1, Eigen::ColMajor, kChunk, 1>;
using ConstArrayView = Eigen::Map<const Eigen::ArrayXf>;
using ArrayView = Eigen::Map<Eigen::ArrayXf>;

}  // namespace

void gelu_forward(float* out, const float* in, Index n, Index c) {
#pragma omp parallel for schedule(static) if (n * c >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    const ConstArrayView x(in + i * c, c);
    ArrayView(out + i * c, c) = 0.5f * x * (1.0f + (kSqrt2OverPi * (x + kCubic * x.cube())).tanh());
  }
}

void gelu_backward(float* din, const float* in, const float* dout, Index n, Index c) {
#pragma omp parallel for schedule(static) if (n * c >= kMinParallelWork)
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < c; j += kChunk) {
      const Index len = std::min(kChunk, c - j);
      const ConstArrayView x(in + i * c + j, len);
      const ChunkArray t = (kSqrt2OverPi * (x + kCubic * x.cube())).tanh();
      const auto dinner = kSqrt2OverPi * (1.0f + 3.0f * kCubic * x.square());
      const auto grad = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t.square()) * dinner;
      ArrayView(din + i * c + j, len) = ConstArrayView(dout + i * c + j, len) * grad;
    }
  }
}

}  // namespace loco::model
