#pragma once
// Puts the pieces of a bundle's messages (stream_bundle.hpp hands them over by offset, in any
// order within a message) back into whole messages, for protocols whose messages are small enough
// to hold at once (the tracker's, the control messages between peers). Bulk transfers consume
// their pieces as they come instead.
//
// The size limit comes from the message's type (proto/message_type.hpp's table for protocol
// messages); the buffer is allocated when the first piece shows the size is within it. A message
// above its limit, or of a type without one, throws Error(protocol) naming what the peer sent,
// which ends the connection (net::Connection turns a handler's Error into a failure).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "loco/net/stripe_assembler.hpp"

namespace loco::net {

struct WholeMessage {
  std::uint16_t type = 0;
  std::vector<std::byte> bytes;
};

class MessageAssembler {
 public:
  // The largest message of `type` this end accepts, or nothing for a type it does not accept.
  using Limit = std::function<std::optional<std::uint64_t>(std::uint16_t type)>;

  explicit MessageAssembler(Limit limit) : limit_(std::move(limit)) {}

  // Adds a piece; returns the message it completes, if it does.
  std::optional<WholeMessage> add(const BundleChunk& piece);

 private:
  Limit limit_;
  std::map<std::uint64_t, WholeMessage> partial_;  // by bundle sequence number
};

}  // namespace loco::net
