#pragma once
// Puts the pieces of a bundle's messages (stream_bundle.hpp hands them over by offset, in any
// order within a message) back into whole messages, for protocols whose messages are small enough
// to hold at once (the tracker's, the control messages between peers). Bulk transfers consume
// their pieces as they come instead.
//
// Memory: a message's buffer grows as its pieces arrive (up to the end of the furthest piece),
// never to the size its first piece announces, and leaves with the message when it completes. The
// bytes held for all partial messages together are capped (`max_buffered`, set by the
// connection's owner according to the connection's state, set_max_buffered()), so a peer that
// announces large messages and sends little of them holds little, and no more than the cap.
//
// Errors: the size limit comes from the message's type (proto/message_type.hpp's table for
// protocol messages). A message above its limit, or of a type without one, or a piece that would
// take the buffered bytes above the cap, throws Error(protocol or resource) naming what the peer
// sent, which ends the connection (net::Connection turns a handler's Error into a failure).

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

  MessageAssembler(Limit limit, std::uint64_t max_buffered)
      : limit_(std::move(limit)), max_buffered_(max_buffered) {}

  // Adds a piece; returns the message it completes, if it does.
  std::optional<WholeMessage> add(const BundleChunk& piece);

  // The cap from the next piece on (bytes already held stay until their messages complete).
  void set_max_buffered(std::uint64_t bytes) { max_buffered_ = bytes; }
  // Bytes held for partial messages.
  std::uint64_t buffered() const { return buffered_; }

 private:
  Limit limit_;
  std::uint64_t max_buffered_;
  std::uint64_t buffered_ = 0;
  std::map<std::uint64_t, WholeMessage> partial_;  // by bundle sequence number
};

}  // namespace loco::net
