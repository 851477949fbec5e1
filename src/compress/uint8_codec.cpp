// uint8 over ±kσ with a bucket-mean codebook (as INTELLECT-1):
//   header | k (f32) | codebook: fp32[256] | codes: u8[n]
// The range [μ - kσ, μ + kσ] is cut into 256 equal buckets of width w = 2kσ / 256; values
// outside are clamped into the end buckets. Each bucket decodes to the mean of the values that
// fell into it (empty buckets: their centre), so a value in an interior bucket is off by < w.

#include <cmath>
#include <cstring>

#include "codecs.hpp"
#include "kernels.hpp"
#include "wire.hpp"

namespace loco::compress::detail {
namespace {

constexpr std::size_t kBuckets = 256;

struct Uint8View {
  float codebook[kBuckets];
  const std::uint8_t* codes = nullptr;
};

class Uint8Codec final : public RangeDecodable<Uint8Codec> {
 public:
  explicit Uint8Codec(float k_sigma) : k_(k_sigma) {}

  std::string spec() const override { return "uint8:k=" + std::to_string(k_); }
  std::size_t max_encoded_size(std::size_t count) const override {
    return kHeaderBytes + 4 + 4 * kBuckets + count;
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    check_shape(options.shape, values.size(), "uint8");
    (void)absmax(values.data(), values.size(), "uint8");  // rejects NaN and infinities
    const std::size_t n = values.size();
    double sum = 0.0;
    double sum_sq = 0.0;
    for (float v : values) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
    const double mean = n ? sum / static_cast<double>(n) : 0.0;
    const double sigma =
        n ? std::sqrt(std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean)) : 0.0;
    const auto lo = static_cast<float>(mean - k_ * sigma);
    const auto width = static_cast<float>(2.0 * k_ * sigma / kBuckets);
    const float inv_width = std::isfinite(1.0f / width) ? 1.0f / width : 0.0f;

    wire::Writer w(max_encoded_size(n));
    w.header(CodecId::uint8, n);
    w.f32(k_);
    std::byte* codebook = w.extend(4 * kBuckets);
    auto* codes = reinterpret_cast<std::uint8_t*>(w.extend(n));
    double bucket_sum[kBuckets] = {};
    std::size_t bucket_count[kBuckets] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const float t = std::floor((values[i] - lo) * inv_width);
      const auto b = static_cast<std::uint8_t>(t >= 255.0f ? 255.0f : (t >= 0.0f ? t : 0.0f));
      codes[i] = b;
      bucket_sum[b] += values[i];
      ++bucket_count[b];
    }
    for (std::size_t b = 0; b < kBuckets; ++b) {
      const float value =
          bucket_count[b] ? static_cast<float>(bucket_sum[b] / static_cast<double>(bucket_count[b]))
                          : lo + (static_cast<float>(b) + 0.5f) * width;
      std::memcpy(codebook + 4 * b, &value, 4);
    }
    return w.finish();
  }

  Uint8View parse(std::span<const std::byte> message, std::size_t count) const {
    wire::Reader r(message, "uint8");
    r.header(CodecId::uint8, count);
    const float k = r.f32();
    if (!std::isfinite(k) || k <= 0.0f) r.fail("k is not a positive number");
    r.expect_remaining(wire::checked_size("uint8", kBuckets, 4, count));
    Uint8View view;
    std::memcpy(view.codebook, r.take(4 * kBuckets), 4 * kBuckets);
    for (float c : view.codebook) {
      if (!std::isfinite(c)) r.fail("the codebook holds a NaN or infinite value");
    }
    view.codes = reinterpret_cast<const std::uint8_t*>(r.take(count));
    return view;
  }

  void decode_range(const Uint8View& view, std::size_t begin, std::size_t end, float* out) const {
    for (std::size_t i = begin; i < end; ++i) out[i - begin] = view.codebook[view.codes[i]];
  }

 private:
  float k_;
};

}  // namespace

std::unique_ptr<Codec> make_uint8(float k_sigma) {
  return std::make_unique<Uint8Codec>(k_sigma);
}

}  // namespace loco::compress::detail
