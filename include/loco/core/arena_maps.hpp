#pragma once
// Eigen views of an arena's tensors. Kept out of arena.hpp: most files that hold arenas never
// compute with Eigen, and parsing <Eigen/Core> costs each of them about a second of build time.

#include <Eigen/Core>
#include <cstddef>

#include "loco/core/arena.hpp"

namespace loco {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrixXf, Eigen::Aligned64>;
using ConstMatrixMap = Eigen::Map<const RowMatrixXf, Eigen::Aligned64>;
using VectorMap = Eigen::Map<Eigen::VectorXf, Eigen::Aligned64>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf, Eigen::Aligned64>;

// Tensor `index` as a 2-D row-major matrix: shape {r, c} maps as r×c, shape {n} as 1×n, and
// shapes of higher rank as shape[0] × (product of the rest).
MatrixMap matrix_map(Arena& arena, std::size_t index);
ConstMatrixMap matrix_map(const Arena& arena, std::size_t index);
// Tensor `index` as a column vector of all its elements.
VectorMap vector_map(Arena& arena, std::size_t index);
ConstVectorMap vector_map(const Arena& arena, std::size_t index);

}  // namespace loco
