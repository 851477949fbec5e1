#include "loco/train/tensor_messages.hpp"

#include <fmt/format.h>

#include "loco/core/byte_io.hpp"

namespace loco::train {

std::vector<std::byte> encode_tensor_messages(
    std::uint8_t version, const ArenaLayout& layout,
    const std::function<std::vector<std::byte>(std::size_t tensor)>& encode_tensor) {
  ByteWriter w;
  w.u8(version);
  w.u32(static_cast<std::uint32_t>(layout.tensor_count()));
  for (std::size_t t = 0; t < layout.tensor_count(); ++t) {
    const std::vector<std::byte> message = encode_tensor(t);
    w.u32(static_cast<std::uint32_t>(message.size()));
    w.bytes(message);
  }
  return w.finish();
}

void decode_tensor_messages(std::span<const std::byte> message, std::string_view name,
                            std::uint8_t version, const compress::Codec& codec, Arena& out) {
  const ArenaLayout& layout = out.layout();
  ByteReader r(message, name);
  if (r.u8() != version) r.fail("another version: the members run different releases");
  const std::uint32_t count = r.u32();
  if (count != layout.tensor_count())
    r.fail(fmt::format("{} tensors where the model has {}", count, layout.tensor_count()));
  for (std::size_t t = 0; t < count; ++t) {
    const std::uint32_t size = r.u32();
    const std::size_t numel = layout.tensor(t).numel;
    if (size > codec.max_encoded_size(numel))
      r.fail(fmt::format("tensor {} takes {} bytes, more than its {} values can", t, size, numel));
    codec.decode(std::span(r.take(size), size), out.tensor(t));
  }
  r.expect_end();
}

}  // namespace loco::train
