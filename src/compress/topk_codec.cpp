// top-k by magnitude: the k = round(fraction · n) (at least 1) largest |x|, ties to the lower
// index, sent as sorted indices plus their values through another codec:
//   header | k (u64) | index gaps: u32[k] (first index, then differences) | values message
// Gaps rather than indices make the stream compressible by a zstd stage. Positions not sent
// decode to -0.0, the additive identity, so decode_accumulate may leave them untouched and
// still match decode-then-add bit for bit.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "codecs.hpp"
#include "kernels.hpp"
#include "top_k.hpp"
#include "wire.hpp"

namespace loco::compress::detail {
namespace {

struct Sparse {
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
};

class TopkCodec final : public Codec {
 public:
  TopkCodec(double fraction, std::string values_name, std::unique_ptr<Codec> values)
      : fraction_(fraction), values_name_(std::move(values_name)), values_(std::move(values)) {}

  std::string spec() const override {
    return "topk:fraction=" + std::to_string(fraction_) + ",values=" + values_name_;
  }
  std::size_t max_encoded_size(std::size_t count) const override {
    const std::size_t k = keep(count);
    return kHeaderBytes + 8 + 4 * k + values_->max_encoded_size(k);
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    check_shape(options.shape, values.size(), "topk");
    (void)absmax(values.data(), values.size(), "topk");
    const std::size_t n = values.size();
    if (n > std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorCategory::invalid_argument,
                  "topk encode: more than 2^32 - 1 values; split the tensor into fragments");
    }
    const std::size_t k = keep(n);
    std::vector<std::uint32_t> order(k);
    std::vector<std::pair<float, std::uint32_t>> heap;
    select_top_k(values, k, heap, order.data());
    std::vector<float> kept(k);
    for (std::size_t i = 0; i < k; ++i) kept[i] = values[order[i]];
    const std::vector<std::byte> inner = values_->encode(kept, {options.seed, {}});

    wire::Writer w(kHeaderBytes + 8 + 4 * k + inner.size());
    w.header(CodecId::topk, n);
    w.u64(k);
    for (std::size_t i = 0; i < k; ++i) w.u32(i == 0 ? order[0] : order[i] - order[i - 1]);
    w.raw(inner.data(), inner.size());
    return w.finish();
  }

  void decode(std::span<const std::byte> message, std::span<float> out) const override {
    const Sparse sparse = parse(message, out.size());
    std::fill(out.begin(), out.end(), -0.0f);
    for (std::size_t i = 0; i < sparse.indices.size(); ++i) {
      out[sparse.indices[i]] = sparse.values[i];
    }
  }
  void decode_accumulate(std::span<const std::byte> message, std::span<float> sum) const override {
    const Sparse sparse = parse(message, sum.size());
    for (std::size_t i = 0; i < sparse.indices.size(); ++i) {
      sum[sparse.indices[i]] += sparse.values[i];
    }
  }

 private:
  std::size_t keep(std::size_t n) const {
    if (n == 0) return 0;
    const auto k = static_cast<std::size_t>(std::llround(fraction_ * static_cast<double>(n)));
    return std::clamp<std::size_t>(k, 1, n);
  }

  Sparse parse(std::span<const std::byte> message, std::size_t count) const {
    wire::Reader r(message, "topk");
    r.header(CodecId::topk, count);
    const std::uint64_t k = r.u64();
    if (k > count || k > r.remaining() / 4) {
      r.fail("declares " + std::to_string(k) + " kept values for " + std::to_string(count) +
             " in a " + std::to_string(message.size()) + "-byte message");
    }
    Sparse sparse;
    sparse.indices.resize(k);
    std::uint64_t index = 0;
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint32_t gap = r.u32();
      if (i > 0 && gap == 0) r.fail("indices are not strictly increasing");
      index += gap;
      if (index >= count) r.fail("index " + std::to_string(index) + " is out of range");
      sparse.indices[i] = static_cast<std::uint32_t>(index);
    }
    sparse.values.resize(k);
    values_->decode(r.rest(), sparse.values);
    return sparse;
  }

  double fraction_;
  std::string values_name_;
  std::unique_ptr<Codec> values_;
};

}  // namespace

std::unique_ptr<Codec> make_topk(double fraction, const std::string& values) {
  return std::make_unique<TopkCodec>(fraction, values, make_value_codec(values, 256));
}

}  // namespace loco::compress::detail
