// A dataset's train shards served by peers (proto/shard_transfer.hpp): the three messages round
// trip, each malformed body is refused before anything is taken from it, and the server answers
// within each asker's share only, and within the upload cap (shard_serve_gate.hpp) over all.

#include "loco/proto/shard_transfer.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::key;

TEST(ShardTransfer, MessagesRoundTrip) {
  const ShardRequest request{.file = 7, .offset = 1u << 20, .length = kMaxPieceBytes};
  EXPECT_EQ(decode_shard_request(encode(request)), request);
  const std::vector<std::byte> bytes(300, std::byte{0x5a});
  const std::vector<std::byte> body = encode_shard_piece(7, 4096, bytes);
  const ShardPiece piece = decode_shard_piece(body);
  EXPECT_EQ(piece.file, 7u);
  EXPECT_EQ(piece.offset, 4096u);
  EXPECT_TRUE(std::ranges::equal(piece.bytes, bytes));
  const ShardRefusal refusal{.file = 3, .reason = "not held here"};
  EXPECT_EQ(decode_shard_refusal(encode(refusal)), refusal);
  EXPECT_TRUE(is_shard_message(MessageType::shard_piece));
  EXPECT_FALSE(is_shard_message(MessageType::state_chunk));
}

TEST(ShardTransfer, MalformedBodiesAreRefused) {
  const std::vector<std::byte> request = encode(ShardRequest{.file = 1, .offset = 0, .length = 8});
  // Truncated, one byte too many, another version, another type's body.
  EXPECT_THROW(decode_shard_request(std::span(request).first(request.size() - 1)), Error);
  std::vector<std::byte> longer = request;
  longer.push_back(std::byte{0});
  EXPECT_THROW(decode_shard_request(longer), Error);
  std::vector<std::byte> version = request;
  version[0] = std::byte{2};
  EXPECT_THROW(decode_shard_request(version), Error);
  EXPECT_THROW(decode_shard_request({}), Error);
  // A length of 0, and one past a piece.
  EXPECT_THROW(decode_shard_request(encode(ShardRequest{.file = 1, .offset = 0, .length = 0})),
               Error);
  EXPECT_THROW(decode_shard_request(
                   encode(ShardRequest{.file = 1, .offset = 0, .length = kMaxPieceBytes + 1})),
               Error);
  // A piece longer than a piece may be, and one cut in its header.
  const std::vector<std::byte> big(kMaxPieceBytes + 1);
  EXPECT_THROW(decode_shard_piece(encode_shard_piece(0, 0, big)), Error);
  const std::vector<std::byte> piece = encode_shard_piece(0, 0, {});
  EXPECT_THROW(decode_shard_piece(std::span(piece).first(5)), Error);
  // A refusal whose reason is not printable (a forged log line), or cut short.
  std::vector<std::byte> refusal = encode(ShardRefusal{.file = 0, .reason = "no"});
  refusal.back() = std::byte{'\n'};
  EXPECT_THROW(decode_shard_refusal(refusal), Error);
  EXPECT_THROW(decode_shard_refusal(std::span(refusal).first(refusal.size() - 1)), Error);
}

TEST(ShardTransfer, TheServerAnswersWithinEachAskersShare) {
  ShardServer server;
  const PeerKey a = key(1).public_key(), b = key(2).public_key();
  const auto serve = [&](const PeerKey& from, std::uint64_t offset, std::uint32_t length,
                         std::optional<std::uint64_t> held) {
    while (server.in_progress() > 0) server.finished();  // each piece sent before the next
    return server.on_request(TimePoint{}, from, {.file = 4, .offset = offset, .length = length},
                             held);
  };
  // Not held, and a range past the end: refused.
  EXPECT_TRUE(std::holds_alternative<ShardRefusal>(serve(a, 0, 100, std::nullopt)));
  EXPECT_TRUE(std::holds_alternative<ShardRefusal>(serve(a, 1000, 100, 1000)));
  // The last piece is cut at the shard's end.
  const auto last = std::get<ShardServer::Serve>(serve(a, 900, 500, 1000));
  EXPECT_EQ(last.length, 100u);
  // The shard twice (a fetch that starts over), then no more for a, while b still gets its own.
  EXPECT_EQ(std::get<ShardServer::Serve>(serve(a, 0, 1000, 1000)).length, 1000u);
  EXPECT_EQ(std::get<ShardServer::Serve>(serve(a, 0, 900, 1000)).length, 900u);
  const auto refused = serve(a, 0, 1, 1000);
  ASSERT_TRUE(std::holds_alternative<ShardRefusal>(refused));
  EXPECT_NE(std::get<ShardRefusal>(refused).reason.find("share is used up"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(b, 0, 1000, 1000)));
  EXPECT_EQ(server.bytes_served(), 3000u);
  // A member that left and came back starts anew.
  server.forget(a);
  EXPECT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(a, 0, 1000, 1000)));
}

// A piece whose bytes could not be read (or whose asker left) was not sent: it does not count
// against the asker's share, nor as served.
TEST(ShardTransfer, APieceNotSentLeavesTheAskersShare) {
  ShardServer server;
  const PeerKey a = key(1).public_key(), b = key(2).public_key();
  const ShardRequest whole{.file = 4, .offset = 0, .length = 1000};
  const auto serve = [&](const PeerKey& from) {
    while (server.in_progress() > 0) server.finished();
    return server.on_request(TimePoint{}, from, whole, 1000);
  };
  const auto first = std::get<ShardServer::Serve>(serve(a));
  ASSERT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(a)));
  // Twice the shard is a's share; the first piece was not sent, so a third is served.
  server.not_sent(a, first);
  EXPECT_EQ(server.bytes_served(), 1000u);
  ASSERT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(a)));
  EXPECT_TRUE(std::holds_alternative<ShardRefusal>(serve(a)));
  // A piece given up for an asker that left and came back takes its new share no lower than
  // zero: b, back, was sent 100 bytes when its old 1,000 are given up, and still gets 2,000.
  const auto to_b = std::get<ShardServer::Serve>(serve(b));
  server.forget(b);
  while (server.in_progress() > 0) server.finished();
  ASSERT_TRUE(std::holds_alternative<ShardServer::Serve>(
      server.on_request(TimePoint{}, b, {.file = 4, .offset = 0, .length = 100}, 1000)));
  server.not_sent(b, to_b);
  ASSERT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(b)));
  ASSERT_TRUE(std::holds_alternative<ShardServer::Serve>(serve(b)));
  EXPECT_TRUE(std::holds_alternative<ShardRefusal>(serve(b)));
}

TEST(ShardTransfer, ABusyServerRefusesWithoutTakingTheAskersShare) {
  ShardServer server(
      ServeLimits{.bytes_per_second = 0, .max_pieces = 1, .max_wait = std::chrono::seconds(10)});
  const PeerKey a = key(1).public_key(), b = key(2).public_key();
  const ShardRequest request{.file = 0, .offset = 0, .length = 1000};
  ASSERT_TRUE(
      std::holds_alternative<ShardServer::Serve>(server.on_request(TimePoint{}, a, request, 1000)));
  // b's piece waits for a's slot: refused as busy, and b's share is untouched.
  for (int i = 0; i < 3; ++i) {
    const auto busy = server.on_request(TimePoint{}, b, request, 1000);
    ASSERT_TRUE(std::holds_alternative<ShardRefusal>(busy));
    EXPECT_NE(std::get<ShardRefusal>(busy).reason.find("busy"), std::string::npos);
  }
  server.finished();
  EXPECT_TRUE(
      std::holds_alternative<ShardServer::Serve>(server.on_request(TimePoint{}, b, request, 1000)));
  server.finished();
  EXPECT_TRUE(std::holds_alternative<ShardServer::Serve>(
      server.on_request(TimePoint{}, b, request, 1000)));  // its second time, within its share
  EXPECT_EQ(server.bytes_served(), 3000u);
}

}  // namespace
}  // namespace loco::proto
