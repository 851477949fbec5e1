#pragma once
// Eigen views over raw float buffers, used by the layers. Layers take raw pointers (llm.c style)
// so a view can start at any row of an activation or arena tensor.

#include <Eigen/Core>
#include <cstdint>

namespace loco::model {

using Index = Eigen::Index;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatView = Eigen::Map<RowMatrix>;
using ConstMatView = Eigen::Map<const RowMatrix>;
using RowVecView = Eigen::Map<Eigen::RowVectorXf>;
using ConstRowVecView = Eigen::Map<const Eigen::RowVectorXf>;
// A block of columns inside wider rows, e.g. one attention head inside the qkv rows.
using StridedView = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;
using ConstStridedView = Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>>;

// Loops over fewer elements than this run on one thread: starting a parallel region costs more
// than it saves (and much more on a busy machine, where a barrier can wait for a time slice).
inline constexpr Index kMinParallelWork = Index{1} << 15;

}  // namespace loco::model
