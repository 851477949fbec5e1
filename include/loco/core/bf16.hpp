#pragma once
// bfloat16 (the upper half of an fp32: sign, 8 exponent bits, 7 mantissa bits) to and from fp32,
// for the bf16 codec, safetensors' BF16 tensors and a trainer's bf16 buffers (loco/loco.h).

#include <bit>
#include <cstdint>

namespace loco {

// Exact: every bf16 is an fp32.
inline float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(std::uint32_t{b} << 16);
}

// Rounded to nearest, ties to even (relative error ≤ 2^-9); values past bf16's largest finite
// round to ±inf, and a NaN stays a NaN (quiet: rounding could carry its mantissa into inf).
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace loco
