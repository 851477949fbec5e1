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
    // A whole message in one piece (the usual small one) is never buffered.
    if (piece.offset == 0 && piece.completes_message && piece.data.size() == piece.message_size)
      return WholeMessage{.type = piece.message_type,
                          .bytes = std::vector<std::byte>(piece.data.begin(), piece.data.end())};
    it = partial_.emplace(piece.sequence, WholeMessage{.type = piece.message_type, .bytes = {}})
             .first;
  }
  // The stripe assembler has checked that the piece lies inside its message.
  std::vector<std::byte>& bytes = it->second.bytes;
  const std::size_t end = static_cast<std::size_t>(piece.offset) + piece.data.size();
  if (end > bytes.size()) {
    const std::uint64_t grown = buffered_ + (end - bytes.size());
    if (grown > max_buffered_)
      throw Error(ErrorCategory::resource,
                  fmt::format("sent messages that would need {} bytes held at once, above this "
                              "connection's limit of {} bytes",
                              grown, max_buffered_));
    buffered_ = grown;
    bytes.resize(end);
  }
  std::copy(piece.data.begin(), piece.data.end(),
            bytes.begin() + static_cast<std::ptrdiff_t>(piece.offset));
  if (!piece.completes_message) return std::nullopt;
  // completes_message: every byte has been delivered, so the buffer has the message's size.
  WholeMessage whole = std::move(it->second);
  buffered_ -= whole.bytes.size();
  partial_.erase(it);
  return whole;
}

}  // namespace loco::net
