// DeMo's DCT top-k (docs/DESIGN.md §1.4): orthonormal DCT-II per chunk (chunk size per dimension =
// the largest divisor ≤ the target; matrices get 2-D chunks), the k largest |coefficients| of
// each chunk (ties to the lower index), their values through another codec:
//   header | cols (u64) | chunk rows (u32) | chunk cols (u32) | k (u32)
//          | indices: u16[chunks · k] (per chunk, ascending, row-major within the chunk)
//          | values message (chunks · k values, same order)
// Decoding scatters the values into zero coefficients and applies the inverse transform.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "codecs.hpp"
#include "kernels.hpp"
#include "loco/compress/dct.hpp"
#include "top_k.hpp"
#include "wire.hpp"

namespace loco::compress::detail {
namespace {

constexpr std::size_t kMaxChunk = 128;  // per dimension, so local indices fit in u16

struct Grid {
  std::size_t rows = 0, cols = 0, chunk_rows = 1, chunk_cols = 1, k = 1;
  std::size_t chunks() const { return rows / chunk_rows * (cols / chunk_cols); }
  std::size_t chunk_elements() const { return chunk_rows * chunk_cols; }
};

class DemoCodec final : public Codec {
 public:
  DemoCodec(std::size_t chunk, std::size_t topk, std::string values_name)
      : chunk_(chunk),
        topk_(topk),
        values_name_(std::move(values_name)),
        values_(make_value_codec(values_name_, std::max<std::size_t>(8, (topk + 7) / 8 * 8))) {}

  std::string spec() const override {
    return "demo:chunk=" + std::to_string(chunk_) + ",topk=" + std::to_string(topk_) +
           ",values=" + values_name_;
  }
  std::size_t max_encoded_size(std::size_t count) const override {
    // At most one kept value per element (k ≤ chunk elements).
    return kHeaderBytes + 20 + 2 * count + values_->max_encoded_size(count);
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    check_shape(options.shape, values.size(), "demo");
    (void)absmax(values.data(), values.size(), "demo");
    const Grid grid = grid_for(options.shape, values.size());
    const std::size_t kept = grid.chunks() * grid.k;
    std::vector<std::uint16_t> indices(kept);
    std::vector<float> kept_values(kept);
    // One band of chunk_rows rows at a time: transform, then select in each of its chunks.
    const ChunkedDct band_dct(grid.chunk_rows, grid.cols, grid.chunk_rows, grid.chunk_cols);
    const std::size_t band_size = grid.chunk_rows * grid.cols;
    std::vector<float> band(band_size);
    std::vector<float> chunk_values(grid.chunk_elements());
    std::vector<std::pair<float, std::uint16_t>> heap;
    std::size_t chunk = 0;
    for (std::size_t offset = 0; offset < values.size(); offset += band_size) {
      band_dct.forward(values.subspan(offset, band_size), band);
      for (std::size_t col = 0; col < grid.cols; col += grid.chunk_cols, ++chunk) {
        for (std::size_t r = 0; r < grid.chunk_rows; ++r) {
          std::memcpy(chunk_values.data() + r * grid.chunk_cols, band.data() + r * grid.cols + col,
                      4 * grid.chunk_cols);
        }
        std::uint16_t* chosen = indices.data() + chunk * grid.k;
        select_top_k(chunk_values, grid.k, heap, chosen);
        for (std::size_t j = 0; j < grid.k; ++j) {
          kept_values[chunk * grid.k + j] = chunk_values[chosen[j]];
        }
      }
    }
    const std::vector<std::byte> inner = values_->encode(kept_values, {options.seed, {}});

    wire::Writer w(kHeaderBytes + 20 + 2 * kept + inner.size());
    w.header(CodecId::demo, values.size());
    w.u64(grid.cols);
    w.u32(static_cast<std::uint32_t>(grid.chunk_rows));
    w.u32(static_cast<std::uint32_t>(grid.chunk_cols));
    w.u32(static_cast<std::uint32_t>(grid.k));
    w.raw(indices.data(), 2 * kept);
    w.raw(inner.data(), inner.size());
    return w.finish();
  }

  void decode(std::span<const std::byte> message, std::span<float> out) const override {
    decode_into(message, out, false);
  }
  void decode_accumulate(std::span<const std::byte> message, std::span<float> sum) const override {
    decode_into(message, sum, true);
  }

 private:
  // Validates the whole message, then decodes band by band into `out` (or adds to it).
  void decode_into(std::span<const std::byte> message, std::span<float> out,
                   bool accumulate) const {
    wire::Reader r(message, "demo");
    r.header(CodecId::demo, out.size());
    const Grid grid = parse_grid(r, out.size());
    const std::size_t kept = grid.chunks() * grid.k;
    if (kept > r.remaining() / 2) r.fail("truncated: the index list does not fit");
    std::vector<std::uint16_t> indices(kept);
    const std::byte* index_bytes = r.take(2 * kept);
    if (kept > 0) std::memcpy(indices.data(), index_bytes, 2 * kept);
    for (std::size_t i = 0; i < kept; ++i) {
      const bool first_of_chunk = i % grid.k == 0;
      if (indices[i] >= grid.chunk_elements() ||
          (!first_of_chunk && indices[i] <= indices[i - 1])) {
        r.fail("chunk " + std::to_string(i / grid.k) +
               " has an index out of range or out of order");
      }
    }
    std::vector<float> kept_values(kept);
    values_->decode(r.rest(), kept_values);

    const ChunkedDct band_dct(grid.chunk_rows, grid.cols, grid.chunk_rows, grid.chunk_cols);
    const std::size_t band_size = grid.chunk_rows * grid.cols;
    std::vector<float> coefficients(band_size);
    std::vector<float> decoded(accumulate ? band_size : 0);
    std::size_t chunk = 0;
    for (std::size_t offset = 0; offset < out.size(); offset += band_size) {
      std::fill(coefficients.begin(), coefficients.end(), 0.0f);
      for (std::size_t col = 0; col < grid.cols; col += grid.chunk_cols, ++chunk) {
        for (std::size_t j = chunk * grid.k; j < (chunk + 1) * grid.k; ++j) {
          const std::size_t local = indices[j];
          coefficients[local / grid.chunk_cols * grid.cols + col + local % grid.chunk_cols] =
              kept_values[j];
        }
      }
      const std::span<float> target = out.subspan(offset, band_size);
      if (!accumulate) {
        band_dct.inverse(coefficients, target);
        continue;
      }
      band_dct.inverse(coefficients, decoded);
      for (std::size_t i = 0; i < band_size; ++i) target[i] += decoded[i];
    }
  }

  // Rows × cols as Arena::matrix views a tensor; chunks per dimension from the target size.
  Grid grid_for(std::span<const std::size_t> shape, std::size_t count) const {
    Grid g;
    g.rows = shape.size() >= 2 ? shape[0] : 1;
    g.cols = count == 0 ? 1 : count / g.rows;
    g.chunk_rows = count == 0 ? 1 : chunk_size(g.rows, chunk_);
    g.chunk_cols = count == 0 ? 1 : chunk_size(g.cols, chunk_);
    g.k = std::min(topk_, g.chunk_elements());
    if (count == 0) g.rows = 0;
    return g;
  }

  static Grid parse_grid(wire::Reader& r, std::size_t count) {
    Grid g;
    g.cols = r.u64();
    g.chunk_rows = r.u32();
    g.chunk_cols = r.u32();
    g.k = r.u32();
    if (g.cols == 0 || count % g.cols != 0) r.fail("cols does not divide the count");
    g.rows = count / g.cols;
    if (g.chunk_rows < 1 || g.chunk_rows > kMaxChunk || g.chunk_cols < 1 ||
        g.chunk_cols > kMaxChunk || g.rows % g.chunk_rows != 0 || g.cols % g.chunk_cols != 0) {
      r.fail("chunks are not in [1, 128] or do not divide the matrix");
    }
    if (g.k < 1 || g.k > g.chunk_elements()) r.fail("k is outside [1, chunk elements]");
    return g;
  }

  std::size_t chunk_;
  std::size_t topk_;
  std::string values_name_;
  std::unique_ptr<Codec> values_;
};

}  // namespace

std::unique_ptr<Codec> make_demo(std::size_t chunk, std::size_t topk, const std::string& values) {
  return std::make_unique<DemoCodec>(chunk, topk, values);
}

}  // namespace loco::compress::detail
