// Striping a message across a bundle's streams (sans-I/O): the layout covers every byte once, and
// the assembler puts stripes back together from chunks in any interleaving of the streams, and
// refuses stripes that disagree with the layout or with each other.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/net/stripe_assembler.hpp"
#include "loco/net/stripe_layout.hpp"

namespace loco::net {
namespace {

using secure::ChannelEvent;

std::vector<std::byte> stripe_pattern(std::size_t size, std::uint64_t salt) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>(counter_u64(salt, 0, i));
  return out;
}

// One stream's stripe message of `message`, as the sender builds it.
std::vector<std::byte> stripe_message(const StripeLayout& layout, std::uint32_t stream,
                                      std::span<const std::byte> message) {
  const auto header = encode_stripe_header(message.size());
  std::vector<std::span<const std::byte>> parts{header};
  layout.append_stripe(stream, message, parts);
  std::vector<std::byte> out;
  for (const auto part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

ChannelEvent chunk_event(std::uint16_t type, std::span<const std::byte> stripe, std::size_t offset,
                         std::size_t bytes) {
  return ChannelEvent{.kind = ChannelEvent::Kind::chunk,
                      .message_type = type,
                      .message_size = stripe.size(),
                      .offset = offset,
                      .data = stripe.subspan(offset, bytes)};
}

struct Shape {
  std::uint64_t message_bytes;
  std::uint32_t unit_bytes;
  std::uint32_t streams;
};

const Shape kShapes[] = {
    {0, 4096, 1},     {0, 4096, 3},     {1, 4096, 4},        {4096, 4096, 2},    {4097, 4096, 2},
    {12288, 4096, 3}, {12289, 4096, 3}, {100'000, 4096, 16}, {100'000, 8192, 5}, {65536, 4096, 1}};

TEST(StripeLayout, CoversEveryByteOnceAndStripesAddUp) {
  for (const Shape& shape : kShapes) {
    const StripeLayout layout(shape.message_bytes, shape.unit_bytes, shape.streams);
    std::vector<int> covered(shape.message_bytes, 0);
    std::uint64_t total = 0;
    for (std::uint32_t s = 0; s < shape.streams; ++s) {
      const std::uint64_t bytes = layout.stripe_bytes(s);
      total += bytes;
      for (std::uint64_t at = 0; at < bytes;) {
        const auto run = layout.locate(s, at);
        ASSERT_GT(run.bytes, 0u);
        ASSERT_LE(run.message_offset + run.bytes, shape.message_bytes);
        const std::uint64_t n = std::min(run.bytes, bytes - at);
        for (std::uint64_t i = 0; i < n; ++i) ++covered[run.message_offset + i];
        at += n;
      }
    }
    EXPECT_EQ(total, shape.message_bytes);
    EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; }))
        << shape.message_bytes << " bytes in " << shape.streams << " streams";
  }
}

TEST(StripeLayout, StreamsStayWithinOneUnitOfEachOther) {
  const StripeLayout layout(10 * 4096 + 5, 4096, 4);  // 11 units: 3, 3, 3, 2
  EXPECT_EQ(layout.stripe_bytes(0), 3u * 4096);
  EXPECT_EQ(layout.stripe_bytes(1), 2u * 4096 + 4096);
  EXPECT_EQ(layout.stripe_bytes(2), 2u * 4096 + 5);
  EXPECT_EQ(layout.stripe_bytes(3), 2u * 4096);
  EXPECT_EQ(layout.locate(2, 4096).message_offset, 6u * 4096);  // unit 6 = 4 + 2
}

TEST(StripeLayout, HeaderRoundTrips) {
  for (const std::uint64_t v :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    const auto header = encode_stripe_header(v);
    EXPECT_EQ(decode_stripe_header(header), v);
  }
}

// Sends `messages` through an assembler, the streams' chunks interleaved at random with random
// chunk sizes (1 byte up to 3 units), and checks what comes out.
void round_trip(const Shape& shape, std::uint64_t seed) {
  const std::vector<std::vector<std::byte>> messages = {
      stripe_pattern(shape.message_bytes, seed), stripe_pattern(0, seed + 1),
      stripe_pattern(shape.message_bytes / 3 + 1, seed + 2)};
  std::vector<std::vector<std::vector<std::byte>>> stripes(shape.streams);  // [stream][message]
  for (std::uint32_t s = 0; s < shape.streams; ++s)
    for (const auto& m : messages)
      stripes[s].push_back(
          stripe_message(StripeLayout(m.size(), shape.unit_bytes, shape.streams), s, m));

  StripeAssembler assembler(shape.streams, shape.unit_bytes, std::uint64_t{1} << 30);
  std::map<std::uint64_t, std::vector<std::byte>> received;
  std::map<std::uint64_t, std::vector<int>> hits;
  std::vector<std::size_t> next_message(shape.streams, 0), next_offset(shape.streams, 0);
  std::uint64_t completed = 0;
  Rng rng(seed);
  while (completed < messages.size()) {
    const auto s = static_cast<std::uint32_t>(rng.below(shape.streams));
    if (next_message[s] == messages.size()) continue;
    const auto& stripe = stripes[s][next_message[s]];
    const std::size_t n =
        std::min<std::size_t>(stripe.size() - next_offset[s], 1 + rng.below(3 * shape.unit_bytes));
    const auto pieces = assembler.handle_chunk(
        s, chunk_event(static_cast<std::uint16_t>(7 + next_message[s]), stripe, next_offset[s], n));
    next_offset[s] += n;
    if (next_offset[s] == stripe.size()) {
      ++next_message[s];
      next_offset[s] = 0;
    }
    for (const BundleChunk& piece : pieces) {
      ASSERT_LT(piece.sequence, messages.size());
      ASSERT_GE(piece.sequence, completed) << "no piece of a message after it completed";
      auto [it, created] = received.try_emplace(piece.sequence, piece.message_size);
      if (created) hits[piece.sequence].resize(piece.message_size);
      EXPECT_EQ(piece.message_type, 7 + piece.sequence);
      ASSERT_LE(piece.offset + piece.data.size(), piece.message_size);
      std::copy(piece.data.begin(), piece.data.end(),
                it->second.begin() + static_cast<std::ptrdiff_t>(piece.offset));
      for (std::size_t i = 0; i < piece.data.size(); ++i) ++hits[piece.sequence][piece.offset + i];
      if (piece.completes_message) {
        EXPECT_EQ(piece.sequence, completed) << "messages complete in order";
        ++completed;
      }
    }
  }
  ASSERT_EQ(received.size(), messages.size());
  for (std::size_t m = 0; m < messages.size(); ++m) {
    EXPECT_TRUE(received[m] == messages[m]) << "message " << m;
    EXPECT_TRUE(std::all_of(hits[m].begin(), hits[m].end(), [](int c) { return c == 1; }));
  }
  EXPECT_TRUE(assembler.idle());
}

TEST(StripeAssembler, ReassemblesAnyInterleavingOfStreamsAndChunks) {
  std::uint64_t seed = 1;
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(::testing::Message() << shape.message_bytes << " bytes, " << shape.streams
                                      << " streams, unit " << shape.unit_bytes);
    round_trip(shape, seed++);
  }
}

// Feeds one stream's whole stripe of `message` in one chunk.
std::span<const BundleChunk> feed(StripeAssembler& assembler, std::uint32_t stream,
                                  std::uint16_t type, std::span<const std::byte> stripe) {
  return assembler.handle_chunk(stream, chunk_event(type, stripe, 0, stripe.size()));
}

template <typename F>
void expect_error(ErrorCategory category, F&& f, const std::string& says) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(StripeAssembler, RefusesStripesThatDisagree) {
  const auto message = stripe_pattern(20000, 3);
  const StripeLayout layout(message.size(), 4096, 2);
  const auto stripe0 = stripe_message(layout, 0, message);
  const auto stripe1 = stripe_message(layout, 1, message);
  {
    StripeAssembler a(2, 4096, 1 << 20);
    feed(a, 0, 5, stripe0);
    expect_error(
        ErrorCategory::protocol, [&] { feed(a, 1, 6, stripe1); }, "as type 6");
  }
  {
    StripeAssembler a(2, 4096, 1 << 20);
    feed(a, 1, 5, stripe1);
    auto other = stripe0;  // announces one byte more than stream 1 did
    const auto header = encode_stripe_header(message.size() + 1);
    std::copy(header.begin(), header.end(), other.begin());
    expect_error(
        ErrorCategory::protocol, [&] { feed(a, 0, 5, other); }, "20001 bytes");
  }
  {
    StripeAssembler a(2, 4096, 1 << 20);
    expect_error(
        ErrorCategory::protocol, [&] { feed(a, 1, 5, stripe0); }, "stripe on stream 1");
  }
  {
    StripeAssembler a(2, 4096, 1 << 20);
    const std::vector<std::byte> short_stripe(5);
    expect_error(
        ErrorCategory::protocol, [&] { feed(a, 0, 5, short_stripe); }, "shorter");
  }
  {
    StripeAssembler a(2, 4096, 10000);
    expect_error(
        ErrorCategory::resource, [&] { feed(a, 0, 5, stripe0); }, "above the limit");
  }
}

TEST(StripeAssembler, RefusesChunkSequencesNoChannelWouldDeliverWithAnErrorNotAnAbort) {
  // A stripe's later chunk that grows the message: before the channel checked sizes, this
  // reached StripeLayout::locate's invariant and aborted the process (a remote kill switch).
  const auto message = stripe_pattern(4088, 1);
  const auto stripe = stripe_message(StripeLayout(message.size(), 4096, 1), 0, message);
  ASSERT_EQ(stripe.size(), 4096u);
  const auto grown = [&](std::uint64_t size) {
    secure::ChannelEvent event = chunk_event(5, stripe, 100, 100);
    event.message_size = size;
    return event;
  };
  {
    StripeAssembler a(1, 4096, 1 << 20);
    a.handle_chunk(0, chunk_event(5, stripe, 0, 100));
    expect_error(
        ErrorCategory::protocol, [&] { a.handle_chunk(0, grown(1 << 20)); }, "4096-byte stripe");
  }
  {  // shrinking would end the stripe early
    StripeAssembler a(1, 4096, 1 << 20);
    a.handle_chunk(0, chunk_event(5, stripe, 0, 100));
    expect_error(
        ErrorCategory::protocol, [&] { a.handle_chunk(0, grown(200)); }, "of type 5 on stream 0");
  }
  {  // another type mid-stripe
    StripeAssembler a(1, 4096, 1 << 20);
    a.handle_chunk(0, chunk_event(5, stripe, 0, 100));
    expect_error(
        ErrorCategory::protocol, [&] { a.handle_chunk(0, chunk_event(6, stripe, 100, 100)); },
        "of type 6");
  }
  {  // an offset that skips ahead, or one that starts over
    StripeAssembler a(1, 4096, 1 << 20);
    a.handle_chunk(0, chunk_event(5, stripe, 0, 100));
    expect_error(
        ErrorCategory::protocol, [&] { a.handle_chunk(0, chunk_event(5, stripe, 300, 100)); },
        "where byte 100");
    StripeAssembler b(1, 4096, 1 << 20);
    b.handle_chunk(0, chunk_event(5, stripe, 0, 100));
    expect_error(
        ErrorCategory::protocol, [&] { b.handle_chunk(0, chunk_event(5, stripe, 0, 100)); },
        "where byte 100");
  }
}

TEST(StripeAssembler, AStreamAheadOfTheOthersIsFlaggedThenRefused) {
  const auto empty = stripe_message(StripeLayout(0, 4096, 2), 0, {});
  StripeAssembler a(2, 4096, 1 << 20);
  for (std::uint64_t m = 0; m < StripeAssembler::kMaxMessagesAhead; ++m) {
    EXPECT_FALSE(a.ahead(0));
    feed(a, 0, 1, empty);
  }
  EXPECT_TRUE(a.ahead(0)) << "the driver pauses stream 0 here";
  EXPECT_FALSE(a.ahead(1));
  const auto pieces = feed(a, 1, 1, empty);  // stream 1 completes message 0
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_TRUE(pieces[0].completes_message);
  EXPECT_EQ(pieces[0].sequence, 0u);
  EXPECT_FALSE(a.ahead(0)) << "one message caught up: stream 0 may read again";
  // Stream 0 may start messages up to 2 x kMaxMessagesAhead beyond the oldest (now message 1).
  for (std::uint64_t m = StripeAssembler::kMaxMessagesAhead;
       m <= 2 * StripeAssembler::kMaxMessagesAhead; ++m)
    feed(a, 0, 1, empty);
  expect_error(
      ErrorCategory::resource, [&] { feed(a, 0, 1, empty); }, "ahead");
}

}  // namespace
}  // namespace loco::net
