#pragma once
// A member's message of one codec message per tensor of a layout, as DeMo and SparseLoCo send
// them (demo_components.hpp, sparseloco_components.hpp):
//
//   version u8 | tensor count u32 | per tensor: u32 length | codec message
//
// The decoder checks the version, the count against the layout and each length against the
// bytes left and the codec's bound for that tensor before the codec allocates anything.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/core/arena.hpp"

namespace loco::train {

// The message of `encode_tensor(t)` for every tensor t of `layout`, in order.
std::vector<std::byte> encode_tensor_messages(
    std::uint8_t version, const ArenaLayout& layout,
    const std::function<std::vector<std::byte>(std::size_t tensor)>& encode_tensor);

// Decodes every tensor of `message` into `out` with `codec`. Throws Error(format) whose text
// begins with `name` ("DeMo components") and says what is wrong.
void decode_tensor_messages(std::span<const std::byte> message, std::string_view name,
                            std::uint8_t version, const compress::Codec& codec, Arena& out);

}  // namespace loco::train
