#include "loco/compress/dct.hpp"

#include <cmath>
#include <memory>
#include <numbers>

#include "loco/core/assert.hpp"

namespace loco::compress {
namespace {

using Map = Eigen::Map<RowMatrixXf>;
using ConstMap = Eigen::Map<const RowMatrixXf>;

}  // namespace

std::size_t chunk_size(std::size_t dim, std::size_t target) {
  for (std::size_t c = std::min(dim, target); c > 1; --c) {
    if (dim % c == 0) return c;
  }
  return 1;
}

RowMatrixXf dct_matrix(std::size_t n) {
  RowMatrixXf d(n, n);
  for (std::size_t k = 0; k < n; ++k) {
    const double s = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n));
    for (std::size_t j = 0; j < n; ++j) {
      d(k, j) =
          static_cast<float>(s * std::cos(std::numbers::pi * static_cast<double>((2 * j + 1) * k) /
                                          static_cast<double>(2 * n)));
    }
  }
  return d;
}

ChunkedDct::ChunkedDct(std::size_t rows, std::size_t cols, std::size_t chunk_rows,
                       std::size_t chunk_cols)
    : rows_(rows),
      cols_(cols),
      chunk_rows_(chunk_rows),
      chunk_cols_(chunk_cols),
      row_dct_(dct_matrix(chunk_rows)),
      col_dct_(dct_matrix(chunk_cols)) {
  LOCO_ASSERT(
      chunk_rows >= 1 && chunk_cols >= 1 && rows % chunk_rows == 0 && cols % chunk_cols == 0,
      "DCT chunks must divide the matrix");
}

// Both directions are two products: along columns, one per band of chunk_rows rows; along rows,
// one product of the whole tensor viewed as (rows·cols/chunk_cols) × chunk_cols.
void ChunkedDct::forward(std::span<const float> in, std::span<float> out) const {
  LOCO_ASSERT(in.size() == rows_ * cols_ && out.size() == in.size(), "DCT size mismatch");
  if (in.empty()) return;
  const std::unique_ptr<float[]> along_cols(new float[in.size()]);  // no zero-fill
  for (std::size_t band = 0; band < rows_; band += chunk_rows_) {
    Map(along_cols.get() + band * cols_, chunk_rows_, cols_).noalias() =
        row_dct_ * ConstMap(in.data() + band * cols_, chunk_rows_, cols_);
  }
  const std::size_t segments = in.size() / chunk_cols_;
  Map(out.data(), segments, chunk_cols_).noalias() =
      ConstMap(along_cols.get(), segments, chunk_cols_) * col_dct_.transpose();
}

void ChunkedDct::inverse(std::span<const float> in, std::span<float> out) const {
  LOCO_ASSERT(in.size() == rows_ * cols_ && out.size() == in.size(), "DCT size mismatch");
  if (in.empty()) return;
  const std::size_t segments = in.size() / chunk_cols_;
  const std::unique_ptr<float[]> along_rows(new float[in.size()]);
  Map(along_rows.get(), segments, chunk_cols_).noalias() =
      ConstMap(in.data(), segments, chunk_cols_) * col_dct_;
  for (std::size_t band = 0; band < rows_; band += chunk_rows_) {
    Map(out.data() + band * cols_, chunk_rows_, cols_).noalias() =
        row_dct_.transpose() * ConstMap(along_rows.get() + band * cols_, chunk_rows_, cols_);
  }
}

}  // namespace loco::compress
