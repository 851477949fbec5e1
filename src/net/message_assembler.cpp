#include "loco/net/message_assembler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"

namespace loco::net {

std::optional<WholeMessage> MessageAssembler::add(const BundleChunk& piece) {
  auto it = partial_.find(piece.sequence);
  if (it == partial_.end()) {
    const auto limit = limit_(piece.message_type);
    if (!limit)
      throw Error(ErrorCategory::protocol,
                  fmt::format("sent a message of type {:#06x}, which this end does not accept",
                              piece.message_type));
    if (piece.message_size > *limit)
      throw Error(ErrorCategory::protocol,
                  fmt::format("sent a message of type {:#06x} of {} bytes, above its limit of {}",
                              piece.message_type, piece.message_size, *limit));
    it = partial_.emplace(piece.sequence, WholeMessage{.type = piece.message_type, .bytes = {}})
             .first;
    it->second.bytes.resize(piece.message_size);
  }
  // The stripe assembler has checked that the piece lies inside its message.
  std::copy(piece.data.begin(), piece.data.end(),
            it->second.bytes.begin() + static_cast<std::ptrdiff_t>(piece.offset));
  if (!piece.completes_message) return std::nullopt;
  WholeMessage whole = std::move(it->second);
  partial_.erase(it);
  return whole;
}

}  // namespace loco::net
