#pragma once
// The orthonormal DCT-II over chunks of a matrix as DeMo uses it (docs/DESIGN.md §1.4): a rows×cols
// row-major matrix is cut into chunk_rows×chunk_cols blocks and each block is transformed as
// C = D_r · X · D_cᵀ, where D_n[k][j] = s_k · cos(π (2j + 1) k / 2n), s_0 = √(1/n), s_k = √(2/n).
// D is orthogonal, so the inverse is X = D_rᵀ · C · D_c. A vector is a 1×n matrix.
// The transforms are two matrix products over the whole tensor (Eigen), no per-chunk calls.

#include <cstddef>
#include <span>

#include "loco/core/arena_maps.hpp"

namespace loco::compress {

// The largest divisor of `dim` that is ≤ `target` (1 for a prime dim larger than target).
std::size_t chunk_size(std::size_t dim, std::size_t target);

// D_n as a row-major n×n matrix (computed in double, rounded to float).
RowMatrixXf dct_matrix(std::size_t n);

class ChunkedDct {
 public:
  // chunk_rows must divide rows and chunk_cols divide cols (LOCO_ASSERT).
  ChunkedDct(std::size_t rows, std::size_t cols, std::size_t chunk_rows, std::size_t chunk_cols);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::size_t chunk_rows() const { return chunk_rows_; }
  std::size_t chunk_cols() const { return chunk_cols_; }

  // out = DCT of each chunk of in (both rows×cols, row-major; in and out must not overlap).
  void forward(std::span<const float> in, std::span<float> out) const;
  // out = inverse DCT of each chunk of in.
  void inverse(std::span<const float> in, std::span<float> out) const;

 private:
  std::size_t rows_, cols_, chunk_rows_, chunk_cols_;
  RowMatrixXf row_dct_;  // D_{chunk_rows}
  RowMatrixXf col_dct_;  // D_{chunk_cols}
};

}  // namespace loco::compress
