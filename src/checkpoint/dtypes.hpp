#pragma once
// The safetensors dtypes loco loads (private to the checkpoint module). Every one is converted to
// fp32 on load: F32 as it is, F16 and BF16 exactly (fp32 holds every value they hold), F64
// rounded to nearest. Data is little-endian, as the safetensors specification requires.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace loco::checkpoint::detail {

enum class Dtype { f32, f16, bf16, f64 };

// The dtype named `name` in a safetensors header ("F32", "F16", "BF16", "F64"), or nullopt for
// one loco does not load (integers, bool, fp8, ...).
std::optional<Dtype> dtype_of(std::string_view name);

std::uint64_t bytes_per_element(Dtype dtype);

// Converts `in` (out.size() elements of `dtype`) to fp32.
void convert_to_f32(Dtype dtype, std::span<const std::byte> in, std::span<float> out);

}  // namespace loco::checkpoint::detail
