// Stream bundles over real loopback sockets: messages striped over several TCP streams and put
// back together, a clean close, and the listener refusing streams that do not make a bundle.

#include "loco/net/stream_bundle.hpp"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <map>

#include "connection_harness.hpp"
#include "loco/core/rng.hpp"
#include "loco/net/bundle_listener.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::tcp;

std::vector<std::byte> pattern(std::size_t size, std::uint64_t salt) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>(counter_u64(salt, 1, i));
  return out;
}

// What one end of a bundle saw.
struct BundleEnd {
  bool ready = false;
  int closed_calls = 0;
  std::optional<Error> error;
  std::vector<std::pair<std::uint16_t, std::vector<std::byte>>> messages;
  std::map<std::uint64_t, std::vector<std::byte>> partial;

  BundleHandlers handlers() {
    return BundleHandlers{
        .on_ready = [this] { ready = true; },
        .on_chunk = [this](const BundleChunk& piece) { on_chunk(piece); },
        .on_closed =
            [this](const Error* e) {
              ++closed_calls;
              if (e != nullptr) error = *e;
            },
    };
  }

  void on_chunk(const BundleChunk& piece) {
    auto [it, created] = partial.try_emplace(piece.sequence);
    if (created) it->second.resize(piece.message_size);
    ASSERT_LE(piece.offset + piece.data.size(), it->second.size());
    std::copy(piece.data.begin(), piece.data.end(),
              it->second.begin() + static_cast<std::ptrdiff_t>(piece.offset));
    if (!piece.completes_message) return;
    EXPECT_EQ(piece.sequence, messages.size()) << "messages complete in order";
    messages.emplace_back(piece.message_type, std::move(it->second));
    partial.erase(it);
  }
};

class BundlePair {
 public:
  boost::asio::io_context io;
  secure::KeyPair client_key = secure::KeyPair::generate();
  secure::KeyPair server_key = secure::KeyPair::generate();
  BundleEnd client;
  BundleEnd server;
  std::shared_ptr<BundleListener> listener;
  std::shared_ptr<StreamBundle> client_bundle;
  std::shared_ptr<StreamBundle> server_bundle;

  explicit BundlePair(secure::ChannelConfig server_config = config(),
                      Duration bundle_timeout = std::chrono::seconds(10)) {
    ListenerLimits limits = ListenerLimits::peer_defaults();
    limits.bundle_timeout = bundle_timeout;
    limits.handshake_timeout = std::min(limits.handshake_timeout, bundle_timeout);
    BundleListenerConfig listen{
        .setup = setup(server_key, client_key.public_key(), server_config, ""),
        .limits = limits,
        .max_streams = kMaxStreams,
        .link = nullptr,
    };
    listener = BundleListener::create(
        io, {boost::asio::ip::address_v4::loopback(), 0}, std::move(listen),
        [this](const std::shared_ptr<StreamBundle>& bundle, const std::string&) {
          server_bundle = bundle;
          return server.handlers();
        });
    listener->start();
  }

  void connect(const BundleConfig& bundle, std::shared_ptr<LinkShaper> link = nullptr) {
    client_bundle =
        StreamBundle::connect(io, listener->local_endpoint(), bundle,
                              setup(client_key, server_key.public_key(), config(), "server"),
                              client.handlers(), std::move(link));
  }

  static secure::ChannelConfig config() {
    secure::ChannelConfig c;
    c.run_id = "run-1";
    return c;
  }

  static ChannelSetup setup(const secure::KeyPair& key, const secure::PublicKey& other,
                            secure::ChannelConfig config, std::string label) {
    return ChannelSetup{.identity = &key,
                        .config = std::move(config),
                        .accept = [other](const secure::PublicKey& k) { return k == other; },
                        .peer_label = std::move(label)};
  }

  template <typename Pred>
  bool run_until(Pred done) {
    return testing::run_io_until(io, done);
  }
};

TEST(StreamBundle, FourStreamsCarryMessagesBothWaysAndCloseCleanly) {
  BundlePair pair;
  pair.connect(BundleConfig{.streams = 4, .unit_bytes = 256 << 10});
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
  ASSERT_NE(pair.server_bundle, nullptr);
  EXPECT_EQ(pair.server_bundle->stream_count(), 4u);
  EXPECT_EQ(pair.server_bundle->peer_identity(), pair.client_key.public_key());
  EXPECT_EQ(pair.client_bundle->peer_identity(), pair.server_key.public_key());
  EXPECT_EQ(pair.listener->pending_streams(), 0u);

  const auto big = pattern((std::size_t{40} << 20) + 5, 1);  // 161 units: uneven stripes
  const auto small = pattern(1000, 2);
  const auto back = pattern(std::size_t{10} << 20, 3);
  int sent = 0;
  pair.client_bundle->send(3, big, [&] { ++sent; });
  pair.client_bundle->send(4, {}, [&] { ++sent; });
  pair.client_bundle->send(5, small, [&] { ++sent; });
  pair.server_bundle->send(6, back);
  ASSERT_TRUE(pair.run_until(
      [&] { return pair.server.messages.size() == 3 && pair.client.messages.size() == 1; }));
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(pair.server.messages[0].first, 3);
  EXPECT_TRUE(pair.server.messages[0].second == big);
  EXPECT_EQ(pair.server.messages[1].first, 4);
  EXPECT_TRUE(pair.server.messages[1].second.empty());
  EXPECT_EQ(pair.server.messages[2].first, 5);
  EXPECT_TRUE(pair.server.messages[2].second == small);
  EXPECT_EQ(pair.client.messages[0].first, 6);
  EXPECT_TRUE(pair.client.messages[0].second == back);

  pair.client_bundle->close();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.closed_calls && pair.server.closed_calls; }));
  EXPECT_FALSE(pair.client.error) << pair.client.error->what();
  EXPECT_FALSE(pair.server.error) << pair.server.error->what();
  EXPECT_FALSE(pair.client_bundle->send(1, small)) << "a closed bundle takes no more messages";
  pair.io.poll();
  EXPECT_EQ(pair.client.closed_calls, 1);
  EXPECT_EQ(pair.server.closed_calls, 1);
}

TEST(StreamBundle, OneStreamIsAPlainConnection) {
  BundlePair pair;
  pair.connect(BundleConfig{.streams = 1, .unit_bytes = 4096});
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
  const auto message = pattern(100'000, 4);
  pair.client_bundle->send(9, message);
  ASSERT_TRUE(pair.run_until([&] { return pair.server.messages.size() == 1; }));
  EXPECT_TRUE(pair.server.messages[0].second == message);
  pair.server_bundle->close();
  ASSERT_TRUE(pair.run_until([&] { return pair.client.closed_calls && pair.server.closed_calls; }));
  EXPECT_FALSE(pair.client.error || pair.server.error);
}

// What a server logs about a member it cuts off (tracker_service.cpp): its streams' reads summed.
TEST(StreamBundle, ReadCountersSumEveryStreamsReads) {
  BundlePair pair;
  pair.connect(BundleConfig{.streams = 2, .unit_bytes = 4096});
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
  const Connection::ReadCounters before = pair.server_bundle->read_counters();
  EXPECT_GE(before.reads, 2u) << "each stream read its handshake and hello";
  EXPECT_NE(before.last, TimePoint{});

  const auto message = pattern(100'000, 5);
  pair.client_bundle->send(9, message);
  ASSERT_TRUE(pair.run_until([&] { return pair.server.messages.size() == 1; }));
  const Connection::ReadCounters after = pair.server_bundle->read_counters();
  // Both stripes, each in frames read at most 64 KiB at a time, and their framing.
  EXPECT_GE(after.bytes - before.bytes, message.size());
  EXPECT_GE(after.reads - before.reads, 2u);
  EXPECT_GE(after.last, before.last);
  EXPECT_EQ(pair.server_bundle->queued_bytes(), 0u) << "nothing sent back";
}

std::vector<std::uint16_t> types_of(const BundleEnd& end) {
  std::vector<std::uint16_t> out;
  for (const auto& [type, bytes] : end.messages) out.push_back(type);
  return out;
}

// One stream: a reply sent ahead overtakes bulk queued and not begun (Connection::send_ahead).
// Several: it goes in turn, since each stream's k-th message is a stripe of the k-th.
TEST(StreamBundle, SentAheadOvertakesQueuedBulkOnOneStreamAndGoesInTurnOnSeveral) {
  for (const std::uint32_t streams : {1u, 3u}) {
    BundlePair pair;
    pair.connect(BundleConfig{.streams = streams, .unit_bytes = 64 << 10});
    ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
    const auto bulk = pattern(Connection::kSendWindowBytes * 2 * streams, 5);
    const auto reply = pattern(40, 6);
    int taken = 0;
    pair.client_bundle->send(1, bulk);
    pair.client_bundle->send(2, bulk);
    pair.client_bundle->send_ahead(3, reply, [&] { ++taken; });
    ASSERT_TRUE(pair.run_until([&] { return pair.server.messages.size() == 3; }));
    EXPECT_EQ(taken, 1);
    const std::vector<std::uint16_t> expected =
        streams == 1 ? std::vector<std::uint16_t>{1, 3, 2} : std::vector<std::uint16_t>{1, 2, 3};
    EXPECT_EQ(types_of(pair.server), expected) << streams << " streams";
    EXPECT_TRUE(pair.server.messages.back().second == (streams == 1 ? bulk : reply));
  }
}

TEST(StreamBundle, AMessageAboveTheReceiversLimitBreaksTheBundle) {
  auto small_limit = BundlePair::config();
  small_limit.max_message_bytes = 1 << 20;
  BundlePair pair(small_limit);
  pair.connect(BundleConfig{.streams = 4, .unit_bytes = 64 << 10});
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
  const auto message = pattern(2 << 20, 5);  // each stripe (512 KiB) passes the channel's limit
  pair.client_bundle->send(1, message);
  ASSERT_TRUE(pair.run_until([&] { return pair.client.closed_calls && pair.server.closed_calls; }));
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_EQ(pair.server.error->category(), ErrorCategory::resource);
  EXPECT_NE(std::string(pair.server.error->what()).find("2097152-byte message"), std::string::npos)
      << pair.server.error->what();
  EXPECT_TRUE(pair.server.messages.empty());
}

TEST(StreamBundle, ABrokenStreamFailsTheBundleOnceAtBothEnds) {
  BundlePair pair;
  LinkSettings settings;
  settings.faults.drop_after_bytes = 2 << 20;  // every stream drops after 2 MiB
  auto link = LinkShaper::create(settings, steady_now());
  pair.connect(BundleConfig{.streams = 3, .unit_bytes = 64 << 10}, link);
  ASSERT_TRUE(pair.run_until([&] { return pair.client.ready && pair.server.ready; }));
  const auto message = pattern(24 << 20, 6);
  pair.client_bundle->send(1, message);
  ASSERT_TRUE(pair.run_until([&] { return pair.client.closed_calls && pair.server.closed_calls; }));
  pair.io.poll();  // the other streams end too, without a second on_closed
  EXPECT_EQ(pair.client.closed_calls, 1);
  EXPECT_EQ(pair.server.closed_calls, 1);
  ASSERT_TRUE(pair.client.error.has_value());
  EXPECT_EQ(pair.client.error->category(), ErrorCategory::network);
  EXPECT_NE(std::string(pair.client.error->what()).find("link emulation dropped"),
            std::string::npos);
  ASSERT_TRUE(pair.server.error.has_value());
  EXPECT_TRUE(pair.server.messages.empty());
}

// How far a bundle that failed got, which is how its owner tells a refused connection, a
// handshake the other end cut (another run's id), a key it does not accept and a silent end
// apart (net::TrackerLink, proto::ConnectFailure).
TEST(StreamBundle, AFailedSetupSaysHowFarItGot) {
  BundlePair pair;
  const auto attempt = [&](tcp::endpoint to, secure::ChannelConfig config,
                           const secure::PublicKey& pinned) {
    pair.client = BundleEnd{};
    pair.client_bundle = StreamBundle::connect(
        pair.io, to, BundleConfig{.streams = 1, .unit_bytes = 4096},
        BundlePair::setup(pair.client_key, pinned, std::move(config), "server"),
        pair.client.handlers());
    EXPECT_TRUE(pair.run_until([&] { return pair.client.closed_calls > 0; }));
    EXPECT_TRUE(pair.client.error.has_value() && !pair.client.ready);
    return pair.client_bundle;
  };
  using Progress = StreamBundle::Progress;
  const secure::PublicKey server = pair.server_key.public_key();

  secure::ChannelConfig other_run = BundlePair::config();
  other_run.run_id = "run-2";
  auto cut = attempt(pair.listener->local_endpoint(), other_run, server);
  EXPECT_EQ(cut->progress(), Progress::handshaking);
  EXPECT_TRUE(cut->cut_by_peer()) << pair.client.error->what();

  auto wrong_key = attempt(pair.listener->local_endpoint(), BundlePair::config(),
                           secure::KeyPair::generate().public_key());
  EXPECT_EQ(wrong_key->progress(), Progress::handshaking);
  EXPECT_EQ(pair.client.error->category(), ErrorCategory::crypto);

  tcp::acceptor silent(pair.io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
  secure::ChannelConfig impatient = BundlePair::config();
  impatient.handshake_timeout = std::chrono::milliseconds(200);
  auto unanswered = attempt(silent.local_endpoint(), impatient, server);  // in its backlog
  EXPECT_EQ(unanswered->progress(), Progress::handshaking);
  EXPECT_FALSE(unanswered->cut_by_peer()) << pair.client.error->what();

  const tcp::endpoint nobody = silent.local_endpoint();
  silent.close();
  auto refused = attempt(nobody, BundlePair::config(), server);
  EXPECT_EQ(refused->progress(), Progress::connecting) << pair.client.error->what();
}

// A stream opened by hand, to send the listener hellos a real initiator would not.
struct RawStream {
  testing::Side side;
  explicit RawStream(BundlePair& pair) {
    side.key = secure::KeyPair::generate();
    tcp::socket socket(pair.io);
    socket.connect(pair.listener->local_endpoint());
    const secure::PublicKey server = pair.server_key.public_key();
    side.accept = [server](const secure::PublicKey& k) { return k == server; };
    auto channel = std::make_unique<secure::SecureChannel>(
        secure::Role::initiator, pair.client_key, side.config, side.accept, "listener",
        steady_now(), secure::fresh_ephemeral_seed());
    side.connection = Connection::create(std::move(socket), std::move(channel), side.handlers());
    side.connection->start();
  }
  void send_hello(std::uint32_t index, std::uint32_t count, std::uint8_t id) {
    StreamHello hello{.index = index, .count = count, .unit_bytes = 4096, .bundle_id = {}};
    hello.bundle_id.fill(std::byte{id});
    bytes = encode_stream_hello(hello);
    side.connection->send(kStreamHelloType, bytes);
  }
  std::array<std::byte, kStreamHelloBytes> bytes{};
};

TEST(BundleListener, AnIncompleteBundleIsClosedAtTheSetupTimeout) {
  BundlePair pair(BundlePair::config(), std::chrono::milliseconds(300));
  RawStream first(pair);
  RawStream second(pair);
  first.send_hello(0, 3, 1);
  second.send_hello(2, 3, 1);  // stream 1 of 3 never comes
  ASSERT_TRUE(pair.run_until([&] { return first.side.established && second.side.established; }));
  ASSERT_TRUE(pair.run_until([&] { return first.side.ended && second.side.ended; }));
  EXPECT_EQ(pair.listener->pending_streams(), 0u);
  EXPECT_EQ(pair.server_bundle, nullptr);
  EXPECT_TRUE(first.side.messages.empty()) << "no welcome for an incomplete bundle";
}

TEST(BundleListener, RefusesHellosThatDoNotMakeABundle) {
  BundlePair pair;
  RawStream malformed(pair);
  const std::array<std::byte, 23> short_hello{};
  malformed.side.connection->send(kStreamHelloType, short_hello);
  RawStream wrong_type(pair);
  wrong_type.side.connection->send(7, short_hello);
  RawStream twice_a(pair);
  RawStream twice_b(pair);
  twice_a.send_hello(0, 2, 5);
  twice_b.send_hello(0, 2, 5);
  RawStream shape_a(pair);
  RawStream shape_b(pair);
  shape_a.send_hello(0, 2, 6);
  shape_b.send_hello(1, 3, 6);
  RawStream eager(pair);  // data before its bundle is complete
  eager.send_hello(0, 2, 7);
  eager.side.connection->send(1, short_hello);
  for (RawStream* s : {&malformed, &wrong_type, &twice_a, &twice_b, &shape_a, &shape_b, &eager})
    ASSERT_TRUE(pair.run_until([&] { return s->side.ended; }));
  EXPECT_EQ(pair.listener->pending_streams(), 0u);
  EXPECT_EQ(pair.server_bundle, nullptr);
}

TEST(BundleListener, StopClosesWaitingStreams) {
  BundlePair pair;
  RawStream waiting(pair);
  waiting.send_hello(0, 2, 8);
  ASSERT_TRUE(pair.run_until(
      [&] { return pair.listener->pending_streams() == 1 && waiting.side.established; }));
  pair.listener->stop();
  ASSERT_TRUE(pair.run_until([&] { return waiting.side.ended; }));
  EXPECT_EQ(pair.listener->pending_streams(), 0u);
}

}  // namespace
}  // namespace loco::net
