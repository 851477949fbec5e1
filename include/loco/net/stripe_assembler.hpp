#pragma once
// The receiving half of striping (stripe_layout.hpp), sans-I/O: the chunk events of a bundle's N
// channels go in, pieces of the bundle's messages come out, each at its offset in its message.
//
// Call order: handle_chunk(stream, chunk) for every chunk event of every stream, each stream's in
// the order its channel produced them; use the returned pieces before the next call (their data
// points into the chunk). Streams may run ahead of each other by up to kMaxMessagesAhead messages;
// the driver pauses reading a stream while ahead(stream) (net::Connection::pause_reading) and
// resumes it when ahead() turns false after another stream's chunk. A stream that goes further
// than twice that anyway is an error (a driver that does not pause), so the bookkeeping of
// messages in flight stays bounded whatever the peer sends.
//
// Pieces of one message arrive in any order (stream by stream), each byte exactly once. Messages
// complete in the order they were sent: the piece with completes_message is the message's last
// (it may be empty, when the stream that finished last had only its header left).
//
// Errors: a stripe whose header, size or type disagrees with the layout or with the other
// stripes of its message throws Error(protocol); a message above `max_message_bytes` throws
// Error(resource). So does a chunk sequence no channel would produce (a stripe's size or type
// changing between its chunks, an offset that does not continue the stripe): the channel already
// refuses those, and the assembler does not rely on it, since whatever bytes from the network can
// cause must end in an Error, never in a broken invariant. The message says what the peer did
// ("sent ...", "announced ..."): the caller puts the peer's name in front. After an error the
// assembler must not be used.

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "loco/net/stripe_layout.hpp"
#include "loco/secure/secure_channel.hpp"

namespace loco::net {

struct BundleChunk {
  std::uint64_t sequence = 0;  // the bundle message's number, counting from 0
  std::uint16_t message_type = 0;
  std::uint64_t message_size = 0;
  std::uint64_t offset = 0;  // of `data` in the message
  std::span<const std::byte> data;
  bool completes_message = false;  // every byte of the message has now been delivered
};

class StripeAssembler {
 public:
  static constexpr std::uint64_t kMaxMessagesAhead = 64;

  StripeAssembler(std::uint32_t streams, std::uint32_t unit_bytes, std::uint64_t max_message_bytes);
  // Messages announced from now on are checked against this limit instead.
  void set_max_message_bytes(std::uint64_t max_message_bytes) {
    max_message_bytes_ = max_message_bytes;
  }

  std::span<const BundleChunk> handle_chunk(std::uint32_t stream,
                                            const secure::ChannelEvent& chunk);

  // True while `stream` has finished kMaxMessagesAhead messages beyond the oldest incomplete one.
  bool ahead(std::uint32_t stream) const;

  // No message is partly received.
  bool idle() const { return in_flight_.empty(); }

 private:
  struct StreamState {
    std::uint64_t sequence = 0;  // of the stripe being received (= stripes finished)
    bool in_stripe = false;      // its first chunk has arrived
    std::uint16_t stripe_type = 0;
    std::uint64_t stripe_size = 0;      // the channel message's size, header included
    std::uint64_t stripe_received = 0;  // of the channel message, header included
    std::array<std::byte, kStripeHeaderBytes> header{};
    std::size_t header_have = 0;
    std::uint64_t payload_received = 0;
  };
  struct MessageState {
    std::uint16_t type = 0;
    std::uint64_t size = 0;
    bool size_known = false;
    std::uint32_t stripes_started = 0;
    std::uint32_t stripes_finished = 0;
  };

  void check_continues_stripe(std::uint32_t stream, const secure::ChannelEvent& chunk) const;
  MessageState& message_for(std::uint64_t sequence, std::uint32_t stream);
  void begin_stripe(std::uint32_t stream, const secure::ChannelEvent& chunk);
  void check_header(std::uint32_t stream, const secure::ChannelEvent& chunk);
  void emit_payload(std::uint32_t stream, std::span<const std::byte> payload);
  void finish_stripe(std::uint32_t stream);

  std::uint32_t streams_;
  std::uint32_t unit_bytes_;
  std::uint64_t max_message_bytes_;
  std::vector<StreamState> stream_states_;
  std::deque<MessageState> in_flight_;  // messages oldest_ .. oldest_ + size - 1
  std::uint64_t oldest_ = 0;
  std::vector<BundleChunk> out_;
};

}  // namespace loco::net
