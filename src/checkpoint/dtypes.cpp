#include "dtypes.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/bf16.hpp"

namespace loco::checkpoint::detail {
namespace {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian and converted as it is in memory");

// IEEE 754 binary16 to binary32, exact: normals, subnormals, ±0, ±inf and NaN (payload kept).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (std::uint32_t{h} & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa · 2⁻²⁴
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

template <typename Stored, typename Convert>
void convert_each(std::span<const std::byte> in, std::span<float> out, Convert convert) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    Stored value;
    std::memcpy(&value, in.data() + i * sizeof(Stored), sizeof(Stored));
    out[i] = convert(value);
  }
}

}  // namespace

std::optional<Dtype> dtype_of(std::string_view name) {
  if (name == "F32") return Dtype::f32;
  if (name == "F16") return Dtype::f16;
  if (name == "BF16") return Dtype::bf16;
  if (name == "F64") return Dtype::f64;
  return std::nullopt;
}

std::uint64_t bytes_per_element(Dtype dtype) {
  switch (dtype) {
    case Dtype::f16:
    case Dtype::bf16: return 2;
    case Dtype::f32: return 4;
    case Dtype::f64: return 8;
  }
  LOCO_ASSERT(false, "unknown dtype");
  return 0;
}

void convert_to_f32(Dtype dtype, std::span<const std::byte> in, std::span<float> out) {
  LOCO_ASSERT(in.size() == out.size() * bytes_per_element(dtype), "dtype conversion sizes");
  switch (dtype) {
    case Dtype::f32:
      if (!out.empty()) std::memcpy(out.data(), in.data(), in.size());
      return;
    case Dtype::f16: return convert_each<std::uint16_t>(in, out, half_to_float);
    case Dtype::bf16: return convert_each<std::uint16_t>(in, out, bf16_to_float);
    case Dtype::f64:
      return convert_each<double>(in, out, [](double v) { return static_cast<float>(v); });
  }
}

}  // namespace loco::checkpoint::detail
