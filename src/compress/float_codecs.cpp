// fp32, fp16 and bf16: header | values (4, 2 or 2 bytes each, little-endian). fp16 and bf16
// round to nearest even; error ≤ half an ulp of the target format (relative 2^-11 and 2^-8).

#include <cstring>

#include "codecs.hpp"
#include "kernels.hpp"
#include "loco/core/bf16.hpp"
#include "wire.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace loco::compress::detail {
namespace {

enum class FloatKind { fp32, fp16, bf16 };

// Software fp32 -> fp16 (round to nearest even) for the tails and for builds without F16C.
std::uint16_t half_from_float(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // below fp16's smallest normal: a subnormal or zero
    const std::uint32_t shift = 126 - (abs >> 23);
    if (shift > 24) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t mid = 1u << (shift - 1);
    const std::uint32_t rounded = half + (rest > mid || (rest == mid && (half & 1)));
    return static_cast<std::uint16_t>(sign | rounded);
  }
  const std::uint32_t biased = abs - 0x38000000u;  // rebias exponent 127 -> 15
  const std::uint32_t rounded = biased + 0xfffu + ((biased >> 13) & 1);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float float_from_half(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  float out;
  if (exp == 0) {
    out = static_cast<float>(mant) * 0x1p-24f;
    std::uint32_t bits;
    std::memcpy(&bits, &out, 4);
    bits |= sign;
    std::memcpy(&out, &bits, 4);
    return out;
  }
  const std::uint32_t bits = sign | ((exp == 31 ? 255u : exp + 112u) << 23) | (mant << 13);
  std::memcpy(&out, &bits, 4);
  return out;
}

// Messages put no alignment on their payloads: 16-bit values are read and written with memcpy.
void store_u16(std::byte* out, std::size_t i, std::uint16_t v) {
  std::memcpy(out + 2 * i, &v, 2);
}
std::uint16_t load_u16(const std::byte* in, std::size_t i) {
  std::uint16_t v;
  std::memcpy(&v, in + 2 * i, 2);
  return v;
}

void encode_fp16(const float* x, std::size_t n, std::byte* out) {
  std::size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
#endif
  for (; i < n; ++i) store_u16(out, i, half_from_float(x[i]));
}

void decode_fp16(const std::byte* in, std::size_t n, float* out) {
  std::size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 2 * i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = float_from_half(load_u16(in, i));
}

struct FloatView {
  const std::byte* payload = nullptr;
};

class FloatCodec final : public RangeDecodable<FloatCodec> {
 public:
  explicit FloatCodec(FloatKind kind) : kind_(kind) {}

  std::string spec() const override { return name(); }
  std::size_t max_encoded_size(std::size_t count) const override {
    return kHeaderBytes + count * width();
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    check_shape(options.shape, values.size(), name());
    const float amax = absmax(values.data(), values.size(), name());
    if (kind_ == FloatKind::fp16 && amax >= 65520.0f) {
      throw Error(ErrorCategory::invalid_argument,
                  "fp16 encode: a value (|x| = " + std::to_string(amax) +
                      ") exceeds the fp16 range; use bf16 or a scaled codec such as int8");
    }
    wire::Writer w(max_encoded_size(values.size()));
    w.header(id(), values.size());
    std::byte* out = w.extend(values.size() * width());
    const std::size_t n = values.size();
    switch (kind_) {
      case FloatKind::fp32:
        if (n > 0) std::memcpy(out, values.data(), 4 * n);  // memcpy must not see null
        break;
      case FloatKind::fp16: encode_fp16(values.data(), n, out); break;
      case FloatKind::bf16:
        for (std::size_t i = 0; i < n; ++i) store_u16(out, i, float_to_bf16(values[i]));
        break;
    }
    return w.finish();
  }

  FloatView parse(std::span<const std::byte> message, std::size_t count) const {
    wire::Reader r(message, name());
    r.header(id(), count);
    r.expect_remaining(wire::checked_size(name(), count, width()));
    const std::byte* payload = r.take(count * width());
    if (!all_finite(payload, count)) r.fail("a value is NaN or infinite");
    return {payload};
  }

  void decode_range(const FloatView& view, std::size_t begin, std::size_t end, float* out) const {
    const std::byte* in = view.payload + begin * width();
    const std::size_t n = end - begin;
    switch (kind_) {
      case FloatKind::fp32:
        if (n > 0) std::memcpy(out, in, 4 * n);
        break;
      case FloatKind::fp16: decode_fp16(in, n, out); break;
      case FloatKind::bf16:
        for (std::size_t i = 0; i < n; ++i) out[i] = bf16_to_float(load_u16(in, i));
        break;
    }
  }

 private:
  const char* name() const {
    return kind_ == FloatKind::fp32 ? "fp32" : kind_ == FloatKind::fp16 ? "fp16" : "bf16";
  }
  CodecId id() const {
    return kind_ == FloatKind::fp32   ? CodecId::fp32
           : kind_ == FloatKind::fp16 ? CodecId::fp16
                                      : CodecId::bf16;
  }
  std::size_t width() const { return kind_ == FloatKind::fp32 ? 4 : 2; }

  // No value has an all-ones exponent (NaN or ±∞), so decoded updates are always finite.
  // Branch-free over the bits so that it vectorises.
  bool all_finite(const std::byte* payload, std::size_t count) const {
    unsigned bad = 0;
    if (kind_ == FloatKind::fp32) {
      for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, payload + 4 * i, 4);
        bad |= (bits & 0x7f800000u) == 0x7f800000u;
      }
      return bad == 0;
    }
    const unsigned exponent = kind_ == FloatKind::fp16 ? 0x7c00u : 0x7f80u;
    for (std::size_t i = 0; i < count; ++i) bad |= (load_u16(payload, i) & exponent) == exponent;
    return bad == 0;
  }

  FloatKind kind_;
};

}  // namespace

std::unique_ptr<Codec> make_fp32() {
  return std::make_unique<FloatCodec>(FloatKind::fp32);
}
std::unique_ptr<Codec> make_fp16() {
  return std::make_unique<FloatCodec>(FloatKind::fp16);
}
std::unique_ptr<Codec> make_bf16() {
  return std::make_unique<FloatCodec>(FloatKind::bf16);
}

}  // namespace loco::compress::detail
