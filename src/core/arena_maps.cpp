#include "loco/core/arena_maps.hpp"

#include <utility>

namespace loco {
namespace {

std::pair<Eigen::Index, Eigen::Index> matrix_shape(const TensorInfo& t) {
  if (t.shape.empty()) return {1, 1};
  if (t.shape.size() == 1) return {1, static_cast<Eigen::Index>(t.shape[0])};
  return {static_cast<Eigen::Index>(t.shape[0]), static_cast<Eigen::Index>(t.numel / t.shape[0])};
}

}  // namespace

MatrixMap matrix_map(Arena& arena, std::size_t index) {
  const auto [rows, cols] = matrix_shape(arena.layout().tensor(index));
  return MatrixMap(arena.tensor(index).data(), rows, cols);
}

ConstMatrixMap matrix_map(const Arena& arena, std::size_t index) {
  const auto [rows, cols] = matrix_shape(arena.layout().tensor(index));
  return ConstMatrixMap(arena.tensor(index).data(), rows, cols);
}

VectorMap vector_map(Arena& arena, std::size_t index) {
  const std::span<float> t = arena.tensor(index);
  return VectorMap(t.data(), static_cast<Eigen::Index>(t.size()));
}

ConstVectorMap vector_map(const Arena& arena, std::size_t index) {
  const std::span<const float> t = arena.tensor(index);
  return ConstVectorMap(t.data(), static_cast<Eigen::Index>(t.size()));
}

}  // namespace loco
