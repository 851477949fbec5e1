#include "loco/net/stripe_assembler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::net {

StripeAssembler::StripeAssembler(std::uint32_t streams, std::uint32_t unit_bytes,
                                 std::uint64_t max_message_bytes)
    : streams_(streams),
      unit_bytes_(unit_bytes),
      max_message_bytes_(max_message_bytes),
      stream_states_(streams) {
  LOCO_ASSERT(streams > 0 && unit_bytes > 0, "an assembler needs streams and a unit size");
}

std::span<const BundleChunk> StripeAssembler::handle_chunk(std::uint32_t stream,
                                                           const secure::ChannelEvent& chunk) {
  LOCO_ASSERT(stream < streams_, "stream index out of range");
  out_.clear();
  StreamState& state = stream_states_[stream];
  check_continues_stripe(stream, chunk);
  if (!state.in_stripe) begin_stripe(stream, chunk);
  state.stripe_received += chunk.data.size();
  std::span<const std::byte> data = chunk.data;
  if (state.header_have < kStripeHeaderBytes) {
    const std::size_t n = std::min(kStripeHeaderBytes - state.header_have, data.size());
    std::copy_n(data.begin(), n,
                state.header.begin() + static_cast<std::ptrdiff_t>(state.header_have));
    state.header_have += n;
    data = data.subspan(n);
    if (state.header_have == kStripeHeaderBytes) check_header(stream, chunk);
  }
  if (!data.empty()) emit_payload(stream, data);
  if (state.stripe_received == state.stripe_size) finish_stripe(stream);
  return out_;
}

void StripeAssembler::check_continues_stripe(std::uint32_t stream,
                                             const secure::ChannelEvent& chunk) const {
  const StreamState& state = stream_states_[stream];
  const std::uint64_t due = state.in_stripe ? state.stripe_received : 0;
  const bool fits =
      chunk.offset <= chunk.message_size && chunk.data.size() <= chunk.message_size - chunk.offset;
  if (chunk.offset != due || !fits ||
      (state.in_stripe &&
       (chunk.message_size != state.stripe_size || chunk.message_type != state.stripe_type)))
    throw Error(ErrorCategory::protocol,
                fmt::format("sent a chunk [{}, +{}) of a {}-byte stripe of type {} on stream {} "
                            "where byte {} of {} was due",
                            chunk.offset, chunk.data.size(), chunk.message_size, chunk.message_type,
                            stream, due,
                            state.in_stripe ? fmt::format("a {}-byte stripe of type {}",
                                                          state.stripe_size, state.stripe_type)
                                            : std::string("a new stripe")));
}

bool StripeAssembler::ahead(std::uint32_t stream) const {
  return stream_states_[stream].sequence - oldest_ >= kMaxMessagesAhead;
}

StripeAssembler::MessageState& StripeAssembler::message_for(std::uint64_t sequence,
                                                            std::uint32_t stream) {
  const std::uint64_t index = sequence - oldest_;
  if (index >= 2 * kMaxMessagesAhead)
    throw Error(
        ErrorCategory::resource,
        fmt::format("stream {} ran more than {} messages ahead of the others", stream, index));
  while (in_flight_.size() <= index) in_flight_.emplace_back();
  return in_flight_[index];
}

void StripeAssembler::begin_stripe(std::uint32_t stream, const secure::ChannelEvent& chunk) {
  StreamState& state = stream_states_[stream];
  MessageState& message = message_for(state.sequence, stream);
  if (chunk.message_size < kStripeHeaderBytes)
    throw Error(ErrorCategory::protocol,
                fmt::format("sent a {}-byte stripe on stream {}, shorter than its header",
                            chunk.message_size, stream));
  if (message.stripes_started > 0 && message.type != chunk.message_type)
    throw Error(ErrorCategory::protocol,
                fmt::format("sent message {} as type {} on stream {} but as type {} before",
                            state.sequence, chunk.message_type, stream, message.type));
  message.type = chunk.message_type;
  ++message.stripes_started;
  state.in_stripe = true;
  state.stripe_type = chunk.message_type;
  state.stripe_size = chunk.message_size;
}

void StripeAssembler::check_header(std::uint32_t stream, const secure::ChannelEvent& chunk) {
  const StreamState& state = stream_states_[stream];
  MessageState& message = in_flight_[state.sequence - oldest_];
  const std::uint64_t size = decode_stripe_header(state.header);
  if (size > max_message_bytes_)
    throw Error(ErrorCategory::resource,
                fmt::format("announced a {}-byte message, above the limit of {} bytes", size,
                            max_message_bytes_));
  if (message.size_known && message.size != size)
    throw Error(ErrorCategory::protocol,
                fmt::format("announced message {} as {} bytes on stream {} but as {} bytes before",
                            state.sequence, size, stream, message.size));
  message.size = size;
  message.size_known = true;
  const std::uint64_t expected =
      kStripeHeaderBytes + StripeLayout(size, unit_bytes_, streams_).stripe_bytes(stream);
  if (chunk.message_size != expected)
    throw Error(ErrorCategory::protocol,
                fmt::format("sent a {}-byte stripe on stream {} where a {}-byte message has {}",
                            chunk.message_size, stream, size, expected));
}

void StripeAssembler::emit_payload(std::uint32_t stream, std::span<const std::byte> payload) {
  StreamState& state = stream_states_[stream];
  const MessageState& message = in_flight_[state.sequence - oldest_];
  const StripeLayout layout(message.size, unit_bytes_, streams_);
  // check_header() tied the stripe's size to the layout, and chunks stay inside the stripe.
  LOCO_ASSERT(state.payload_received + payload.size() <= layout.stripe_bytes(stream),
              "stripe payload beyond its layout");
  while (!payload.empty()) {
    const StripeLayout::Run run = layout.locate(stream, state.payload_received);
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(run.bytes, payload.size()));
    out_.push_back(BundleChunk{.sequence = state.sequence,
                               .message_type = message.type,
                               .message_size = message.size,
                               .offset = run.message_offset,
                               .data = payload.first(n),
                               .completes_message = false});
    payload = payload.subspan(n);
    state.payload_received += n;
  }
}

void StripeAssembler::finish_stripe(std::uint32_t stream) {
  StreamState& state = stream_states_[stream];
  MessageState& message = in_flight_[state.sequence - oldest_];
  const std::uint64_t sequence = state.sequence;
  ++message.stripes_finished;
  state = StreamState{.sequence = sequence + 1};
  if (message.stripes_finished < streams_) return;
  // Every stream finished this message, hence every earlier one: it is the oldest.
  LOCO_ASSERT(sequence == oldest_, "messages complete in order");
  if (out_.empty())
    out_.push_back(BundleChunk{.sequence = sequence,
                               .message_type = message.type,
                               .message_size = message.size,
                               .offset = message.size,
                               .data = {},
                               .completes_message = false});
  out_.back().completes_message = true;
  in_flight_.pop_front();
  ++oldest_;
}

}  // namespace loco::net
