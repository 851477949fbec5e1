// Connections over real loopback TCP sockets: data both ways, a 256 MiB tensor streamed in
// chunks, and the ways a connection must refuse or drop a peer.

#include "loco/net/connection.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "connection_harness.hpp"
#include "loco/core/rng.hpp"
#include "tcp_relay.hpp"

namespace loco::net {
namespace {

using testing::LoopbackPair;

std::vector<std::byte> ramp(std::size_t size, std::uint8_t salt) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>((i * 7 + salt) & 0xff);
  return out;
}

bool both_ended(const LoopbackPair& pair) {
  return pair.client.ended && pair.server.ended;
}

TEST(Connection, ExchangesMessagesBothWaysAndClosesCleanly) {
  LoopbackPair pair;
  pair.connect();
  const auto to_server = ramp(3'000'000, 1);  // three frames
  const auto to_client = ramp(1000, 2);
  ASSERT_TRUE(pair.run_until([&] { return pair.client.established && pair.server.established; }));
  bool sent = false;
  pair.client.connection->send(5, to_server, [&] { sent = true; });
  pair.server.connection->send(6, to_client);
  ASSERT_TRUE(pair.run_until(
      [&] { return pair.server.messages.size() == 1 && pair.client.messages.size() == 1; }));
  EXPECT_TRUE(sent);
  EXPECT_EQ(pair.server.messages[0].first, 5);
  EXPECT_TRUE(pair.server.messages[0].second == to_server);
  EXPECT_EQ(pair.client.messages[0].first, 6);
  EXPECT_TRUE(pair.client.messages[0].second == to_client);
  EXPECT_EQ(pair.server.connection->peer_identity(), pair.client.key.public_key());

  pair.client.connection->close();
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  EXPECT_FALSE(pair.client.error.has_value()) << pair.client.error->what();
  EXPECT_FALSE(pair.server.error.has_value()) << pair.server.error->what();
}

// A reply sent ahead overtakes the bulk queued and not begun, never the message being encrypted,
// and replies sent ahead keep their own order.
TEST(Connection, AMessageSentAheadOvertakesQueuedBulkButNotTheMessageBegun) {
  LoopbackPair pair;
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.established && pair.server.established; }));
  const auto bulk = ramp(Connection::kSendWindowBytes * 2, 1);  // more than the window: not all
  pair.client.connection->send(1, bulk);                        // encrypted at once
  pair.client.connection->send(2, bulk);
  const auto reply = ramp(40, 3);  // bytes live until sent
  pair.client.connection->send_ahead(3, {reply});
  pair.client.connection->send_ahead(4, {reply});
  ASSERT_TRUE(pair.run_until([&] { return pair.server.messages.size() == 4; }));
  std::vector<std::uint16_t> order;
  for (const auto& [type, bytes] : pair.server.messages) order.push_back(type);
  EXPECT_EQ(order, (std::vector<std::uint16_t>{1, 3, 4, 2}));
  EXPECT_TRUE(pair.server.messages[3].second == bulk);
}

TEST(Connection, AHandlerThatRefusesAMessageEndsThatConnectionWithItsError) {
  LoopbackPair pair;
  pair.server.refuse_messages = true;
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.established && pair.server.established; }));
  pair.client.connection->send(5, ramp(100, 2));
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::protocol);
  EXPECT_NE(std::string(pair.server.error->what()).find("refuses a message of type 5"),
            std::string::npos)
      << pair.server.error->what();
  EXPECT_TRUE(pair.client.error.has_value()) << "the client sees the connection end";
}

TEST(Connection, Streams256MiBTensorInChunksIntact) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  std::vector<std::uint64_t> tensor(kBytes / 8);
  for (std::size_t i = 0; i < tensor.size(); ++i) tensor[i] = counter_u64(42, 0, i);
  const auto bytes = std::as_bytes(std::span(tensor));
  const Digest expected = blake2b(bytes);

  LoopbackPair pair;
  pair.server.hash_only = true;
  pair.connect();
  bool sent = false;
  pair.client.connection->send(1, bytes, [&] { sent = true; });  // queued before the handshake
  // Backpressure: the sender encrypts only as the socket drains, never the whole tensor at once.
  std::size_t most_queued = 0;
  ASSERT_TRUE(pair.run_until([&] {
    most_queued = std::max(most_queued, pair.client.connection->queued_bytes());
    return pair.server.streamed_digest.has_value();
  }));
  EXPECT_LE(most_queued, Connection::kSendWindowBytes + secure::sealed_frame_size(1 << 20));
  EXPECT_GT(most_queued, 0u);
  EXPECT_TRUE(sent);
  EXPECT_EQ(pair.server.streamed_bytes, kBytes);
  EXPECT_EQ(*pair.server.streamed_digest, expected);
  pair.server.connection->close();
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  EXPECT_FALSE(pair.client.error || pair.server.error);
}

TEST(Connection, WrongIdentityIsRejected) {
  LoopbackPair pair;
  const auto stranger = secure::KeyPair::generate().public_key();
  pair.server.accept = [stranger](const secure::PublicKey& k) { return k == stranger; };
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::crypto);
  EXPECT_FALSE(pair.server.established);
  ASSERT_TRUE(pair.client.error.has_value());  // the server hung up on it
  EXPECT_EQ(pair.client.error->category(), ErrorCategory::network);
}

TEST(Connection, AnotherRunIdIsRejected) {
  LoopbackPair pair;
  pair.server.config.run_id = "run-2";
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::protocol);
  EXPECT_NE(std::string(pair.server.error->what()).find("another run"), std::string::npos);
  EXPECT_FALSE(pair.client.established);
}

TEST(Connection, OversizedFrameIsRejected) {
  LoopbackPair pair;
  pair.client.config.max_frame_bytes = 1 << 20;
  pair.server.config.max_frame_bytes = 64 << 10;
  pair.connect();
  const auto message = ramp(200 << 10, 3);
  pair.client.connection->send(1, message);
  ASSERT_TRUE(pair.run_until([&] { return both_ended(pair); }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::resource);
  EXPECT_TRUE(pair.server.messages.empty());
}

TEST(Connection, FlippedBitOnTheWireClosesTheConnectionWithALoggedError) {
  const auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));

  LoopbackPair pair;
  // Client-to-server stream: handshake messages 1 and 3 (72 + 112 bytes), then the first frame;
  // the flip lands in that frame's ciphertext.
  testing::FlipRelay relay(pair.io, pair.acceptor.local_endpoint(), 72 + 112 + 40);
  pair.connect(relay.endpoint());
  const auto message = ramp(1000, 4);
  pair.client.connection->send(1, message);
  const bool ended = pair.run_until([&] { return both_ended(pair); });
  spdlog::set_default_logger(previous);

  ASSERT_TRUE(ended);
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::crypto);
  EXPECT_TRUE(pair.server.messages.empty());
  bool logged = false;
  for (const auto& line : sink->last_formatted())
    logged = logged || line.find("does not authenticate") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(Connection, StalledHandshakeIsDroppedAfterTheTimeout) {
  LoopbackPair pair;
  pair.server.config.handshake_timeout = std::chrono::milliseconds(200);
  // A client that connects and then says nothing.
  boost::asio::ip::tcp::socket silent(pair.io);
  silent.connect(pair.acceptor.local_endpoint());
  auto channel = std::make_unique<secure::SecureChannel>(
      secure::Role::responder, pair.server.key, pair.server.config,
      [](const secure::PublicKey&) { return true; }, "silent client", steady_now(),
      secure::fresh_ephemeral_seed());
  pair.server.connection =
      Connection::create(pair.acceptor.accept(), std::move(channel), pair.server.handlers());
  pair.server.connection->start();
  ASSERT_TRUE(pair.run_until([&] { return pair.server.ended; }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::network);
  EXPECT_NE(std::string(pair.server.error->what()).find("did not finish"), std::string::npos);
  // The silent client finds its socket closed: message 2 was never sent, so it reads EOF.
  std::array<char, 256> buffer{};
  boost::system::error_code error;
  silent.read_some(boost::asio::buffer(buffer), error);
  EXPECT_EQ(error, boost::asio::error::eof);
}

}  // namespace
}  // namespace loco::net

namespace loco::net {
namespace {

TEST(Connection, SendAfterThePeerClosedIsRefusedNotACrash) {
  testing::LoopbackPair pair;
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.established && pair.server.established; }));
  pair.server.connection->close();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ended && pair.server.ended; }));
  const std::array<std::byte, 4> late{};
  EXPECT_FALSE(pair.client.connection->send(1, late));
  EXPECT_FALSE(pair.client.error.has_value());
  EXPECT_FALSE(pair.server.error.has_value());
}

TEST(Connection, PausedReadingHoldsMessagesUntilResumed) {
  testing::LoopbackPair pair;
  pair.connect();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.established && pair.server.established; }));
  pair.server.connection->pause_reading();
  const auto head = ramp(3000, 3);
  const auto tail = ramp(70'000, 4);
  pair.client.connection->send(1, head);
  pair.client.connection->send(2, {head, {}, tail});  // one message from a gather list
  ASSERT_TRUE(pair.run_until([&] { return pair.client.connection->queued_bytes() == 0; }));
  pair.io.run_for(std::chrono::milliseconds(100));  // time enough for the bytes to arrive
  EXPECT_TRUE(pair.server.messages.empty()) << "a paused connection delivered a message";

  pair.server.connection->resume_reading();
  ASSERT_TRUE(pair.run_until([&] { return pair.server.messages.size() == 2; }));
  EXPECT_TRUE(pair.server.messages[0].second == head);
  auto joined = head;
  joined.insert(joined.end(), tail.begin(), tail.end());
  EXPECT_EQ(pair.server.messages[1].first, 2);
  EXPECT_TRUE(pair.server.messages[1].second == joined);
}

}  // namespace
}  // namespace loco::net
