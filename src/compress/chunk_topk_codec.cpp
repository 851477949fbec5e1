// Chunk-wise top-k (SparseLoCo's, docs/STRATEGIES.md): the values split into chunks of `chunk`
// consecutive elements (the last may be shorter), each chunk keeps its k largest |x| (ties to the
// lower index; k = min(topk, the chunk's length)), their values through another codec:
//   header | chunk (u32) | k (u32) | indices: u16[kept] (per chunk, ascending, chunk-local)
//          | values message (kept values, same order)
// With a chunk of at most 65536 an index costs 16 bits. The values codec gets blocks of k rounded
// up to a multiple of 8, so a block codec's scale is per chunk when k is a multiple of 8.
// Positions not sent decode to -0.0 (the additive identity, as topk's).

#include <algorithm>
#include <cstring>
#include <limits>

#include "codecs.hpp"
#include "kernels.hpp"
#include "top_k.hpp"
#include "wire.hpp"

namespace loco::compress::detail {
namespace {

constexpr std::size_t kMaxChunkLength = std::size_t{1} << 16;  // chunk-local indices fit in u16

struct Chunks {
  std::size_t count = 0, chunk = 1, k = 1;
  std::size_t chunks() const { return (count + chunk - 1) / chunk; }
  std::size_t length(std::size_t c) const { return std::min(chunk, count - c * chunk); }
  std::size_t keep(std::size_t c) const { return std::min(k, length(c)); }
  // Every chunk but the last keeps k; never more than count.
  std::size_t kept() const {
    const std::size_t n = chunks();
    return n == 0 ? 0 : (n - 1) * k + keep(n - 1);
  }
};

struct KeptValues {
  std::vector<std::uint32_t> indices;  // global, ascending
  std::vector<float> values;
};

class ChunkTopkCodec final : public Codec {
 public:
  ChunkTopkCodec(std::size_t chunk, std::size_t topk, std::string values_name)
      : chunk_(chunk),
        topk_(topk),
        values_name_(std::move(values_name)),
        values_(make_value_codec(values_name_, std::max<std::size_t>(8, (topk + 7) / 8 * 8))) {}

  std::string spec() const override {
    return "chunktopk:chunk=" + std::to_string(chunk_) + ",topk=" + std::to_string(topk_) +
           ",values=" + values_name_;
  }
  std::size_t max_encoded_size(std::size_t count) const override {
    return kHeaderBytes + 8 + 2 * count + values_->max_encoded_size(count);
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    check_shape(options.shape, values.size(), "chunktopk");
    (void)absmax(values.data(), values.size(), "chunktopk");
    if (values.size() > std::numeric_limits<std::uint32_t>::max())
      throw Error(ErrorCategory::invalid_argument,
                  "chunktopk encode: more than 2^32 - 1 values; split the tensor");
    const Chunks grid{values.size(), chunk_, std::min(topk_, chunk_)};
    std::vector<std::uint16_t> indices(grid.kept());
    std::vector<float> kept(indices.size());
    std::vector<std::pair<float, std::uint16_t>> heap;
    std::size_t at = 0;
    for (std::size_t c = 0; c < grid.chunks(); ++c) {
      const std::span<const float> chunk = values.subspan(c * chunk_, grid.length(c));
      std::uint16_t* chosen = indices.data() + at;
      select_top_k(chunk, grid.keep(c), heap, chosen);
      for (std::size_t j = 0; j < grid.keep(c); ++j) kept[at + j] = chunk[chosen[j]];
      at += grid.keep(c);
    }
    const std::vector<std::byte> inner = values_->encode(kept, {options.seed, {}});
    wire::Writer w(kHeaderBytes + 8 + 2 * indices.size() + inner.size());
    w.header(CodecId::chunktopk, values.size());
    w.u32(static_cast<std::uint32_t>(grid.chunk));
    w.u32(static_cast<std::uint32_t>(grid.k));
    w.raw(indices.data(), 2 * indices.size());
    w.raw(inner.data(), inner.size());
    return w.finish();
  }

  void decode(std::span<const std::byte> message, std::span<float> out) const override {
    const KeptValues sparse = parse(message, out.size());
    std::fill(out.begin(), out.end(), -0.0f);
    for (std::size_t i = 0; i < sparse.indices.size(); ++i)
      out[sparse.indices[i]] = sparse.values[i];
  }
  void decode_accumulate(std::span<const std::byte> message, std::span<float> sum) const override {
    const KeptValues sparse = parse(message, sum.size());
    for (std::size_t i = 0; i < sparse.indices.size(); ++i)
      sum[sparse.indices[i]] += sparse.values[i];
  }

 private:
  // Checks every field against `count` (the receiver's) and the bytes left before allocating.
  KeptValues parse(std::span<const std::byte> message, std::size_t count) const {
    wire::Reader r(message, "chunktopk");
    r.header(CodecId::chunktopk, count);
    Chunks grid{count, r.u32(), r.u32()};
    if (grid.chunk < 1 || grid.chunk > kMaxChunkLength) r.fail("chunk is outside [1, 65536]");
    if (grid.k < 1 || grid.k > grid.chunk) r.fail("k is outside [1, chunk]");
    const std::size_t kept = grid.kept();  // ≤ count
    if (kept > r.remaining() / 2) r.fail("truncated: the index list does not fit");
    const std::byte* bytes = r.take(2 * kept);
    KeptValues sparse;
    sparse.indices.resize(kept);
    std::size_t at = 0;
    for (std::size_t c = 0; c < grid.chunks(); ++c) {
      for (std::size_t j = 0; j < grid.keep(c); ++j, ++at) {
        std::uint16_t local;
        std::memcpy(&local, bytes + 2 * at, 2);
        if (local >= grid.length(c) || (j > 0 && local <= sparse.indices[at - 1] - c * grid.chunk))
          r.fail("chunk " + std::to_string(c) + " has an index out of range or out of order");
        sparse.indices[at] = static_cast<std::uint32_t>(c * grid.chunk + local);
      }
    }
    sparse.values.resize(kept);
    values_->decode(r.rest(), sparse.values);
    return sparse;
  }

  std::size_t chunk_;
  std::size_t topk_;
  std::string values_name_;
  std::unique_ptr<Codec> values_;
};

}  // namespace

std::unique_ptr<Codec> make_chunk_topk(std::size_t chunk, std::size_t topk,
                                       const std::string& values) {
  return std::make_unique<ChunkTopkCodec>(chunk, topk, values);
}

}  // namespace loco::compress::detail
