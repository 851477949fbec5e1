// BundleListener under a flood, over real loopback sockets. Linux routes all of 127/8 to lo, so
// 127.0.0.2 and 127.0.0.3 are distinct sources next to the honest peers' 127.0.0.1. Nothing here
// asserts how long anything took at most: each test waits (with a long hang guard) for the
// condition it is about, and the only timing assertion is a lower bound.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio.hpp>
#include <sstream>

#include "connection_harness.hpp"
#include "idle_socket.hpp"
#include "loco/net/bundle_listener.hpp"
#include "loco/net/peer_mesh.hpp"

namespace loco::net {
namespace {

using testing::count_dropped;
using testing::IdleSocket;

using boost::asio::ip::tcp;
using std::chrono::seconds;

struct ServerEnd {
  bool ready = false;
  bool closed = false;
  std::string error;  // the bundle's error, if it ended with one
  BundleHandlers handlers() {
    return BundleHandlers{.on_ready = [this] { ready = true; },
                          .on_chunk = {},
                          .on_closed =
                              [this](const Error* e) {
                                closed = true;
                                if (e != nullptr) error = e->what();
                              }};
  }
};

class Listening {
 public:
  boost::asio::io_context io;
  secure::KeyPair server_key = secure::KeyPair::generate();
  secure::KeyPair client_key = secure::KeyPair::generate();
  std::shared_ptr<BundleListener> listener;
  std::vector<std::shared_ptr<StreamBundle>> admitted;  // held, as the listener's owner would
  ServerEnd server;

  explicit Listening(const ListenerLimits& limits) {
    listener = BundleListener::create(
        io, {boost::asio::ip::address_v4::loopback(), 0},
        BundleListenerConfig{.setup = setup(server_key, client_key.public_key()),
                             .limits = limits,
                             .max_streams = kMaxStreams,
                             .link = nullptr},
        [this](const std::shared_ptr<StreamBundle>& bundle, const std::string&) {
          admitted.push_back(bundle);
          return server.handlers();
        });
    listener->start();
  }

  // An honest peer from 127.0.0.1 opening a bundle of `streams`.
  std::shared_ptr<StreamBundle> connect(ServerEnd& end, std::uint32_t streams = 2) {
    return StreamBundle::connect(io, listener->local_endpoint(),
                                 BundleConfig{.streams = streams, .unit_bytes = 64 << 10},
                                 setup(client_key, server_key.public_key()), end.handlers());
  }

  std::vector<std::unique_ptr<IdleSocket>> flood(const std::string& source, int count) {
    std::vector<std::unique_ptr<IdleSocket>> sockets;
    for (int i = 0; i < count; ++i)
      sockets.push_back(std::make_unique<IdleSocket>(io, source, listener->local_endpoint()));
    return sockets;
  }

  // As flood, each one accepted before the next is opened: their order of arrival is known.
  std::vector<std::unique_ptr<IdleSocket>> flood_one_by_one(const std::string& source, int count) {
    std::vector<std::unique_ptr<IdleSocket>> sockets;
    for (int i = 0; i < count; ++i) {
      const std::size_t before = listener->budget().pending_from(source);
      sockets.push_back(std::make_unique<IdleSocket>(io, source, listener->local_endpoint()));
      if (!run_until([&] { return listener->budget().pending_from(source) > before; })) break;
    }
    return sockets;
  }

  template <typename Pred>
  bool run_until(Pred done) {
    return testing::run_io_until(io, done, seconds(120));
  }

  bool budget_is_empty() const {
    const SourceBudget& b = listener->budget();
    return b.sources() == 0 && b.in_phase(StreamPhase::handshake) == 0 &&
           b.in_phase(StreamPhase::waiting) == 0 && b.in_phase(StreamPhase::admitted) == 0;
  }

 private:
  static ChannelSetup setup(const secure::KeyPair& key, const secure::PublicKey& other) {
    secure::ChannelConfig config;
    config.run_id = "run-1";
    return ChannelSetup{.identity = &key,
                        .config = config,
                        .accept = [other](const secure::PublicKey& k) { return k == other; },
                        .peer_label = "peer"};
  }
};

// The peer's defaults, with deadlines far beyond any test so that only the caps act.
ListenerLimits peer_caps_without_deadlines() {
  ListenerLimits limits = ListenerLimits::peer_defaults();
  limits.handshake_timeout = limits.bundle_timeout = seconds(600);
  return limits;
}

TEST(ListenerFlood, PeerMeshListensWithThePeerDefaults) {
  const PeerMeshConfig config;
  EXPECT_EQ(config.limits.max_handshakes, ListenerLimits::peer_defaults().max_handshakes);
  EXPECT_EQ(config.limits.max_pending_per_source,
            ListenerLimits::peer_defaults().max_pending_per_source);
  EXPECT_EQ(config.limits.handshake_timeout, ListenerLimits::peer_defaults().handshake_timeout);
}

TEST(ListenerFlood, AnIdleFloodFromOneAddressLeavesRoomForAnotherAndItsCountsReturnToZero) {
  Listening l(peer_caps_without_deadlines());
  const std::size_t share = l.listener->budget().limits().max_pending_per_source;  // 16
  auto flood = l.flood("127.0.0.2", 100);
  // The flood's share is held; everything past it is closed at once.
  ASSERT_TRUE(l.run_until([&] {
    return l.listener->budget().pending_from("127.0.0.2") == share &&
           count_dropped(flood) == flood.size() - share;
  }));
  ServerEnd client;
  auto bundle = l.connect(client);
  ASSERT_TRUE(l.run_until([&] { return client.ready && l.server.ready; }));
  EXPECT_EQ(l.listener->budget().pending_from("127.0.0.2"), share);  // still held meanwhile
  EXPECT_EQ(l.listener->budget().admitted_from("127.0.0.1"), 2u);

  for (auto& s : flood) s->close();
  ASSERT_TRUE(l.run_until([&] { return l.listener->budget().pending_from("127.0.0.2") == 0; }));
  EXPECT_EQ(l.listener->budget().sources(), 1u);  // no entry is left for 127.0.0.2
  bundle->close();
  ASSERT_TRUE(l.run_until([&] { return client.closed && l.server.closed; }));
  ASSERT_TRUE(l.run_until([&] { return l.budget_is_empty(); }));
}

// Finding 7 of the strangers' review: idle handshakes from a few addresses used to take every slot
// of a peer's table until their deadline, so that a restarted member could not reconnect. A full
// table now makes room: the newcomer evicts the oldest handshake of the source holding the most.
TEST(ListenerFlood, WhileEveryHandshakeSlotIsTakenANewcomerEvictsTheLargestSourcesOldest) {
  ListenerLimits limits = peer_caps_without_deadlines();
  limits.max_handshakes = 5;
  auto l = std::make_unique<Listening>(limits);
  auto a = l->flood_one_by_one("127.0.0.2", 3);
  auto b = l->flood_one_by_one("127.0.0.3", 2);
  ASSERT_TRUE(
      l->run_until([&] { return l->listener->budget().in_phase(StreamPhase::handshake) == 5; }));
  ServerEnd newcomer;
  auto first = l->connect(newcomer, 1);
  ASSERT_TRUE(l->run_until([&] { return newcomer.ready && l->server.ready; }));
  EXPECT_EQ(l->listener->budget().admitted_from("127.0.0.1"), 1u);
  EXPECT_EQ(l->listener->budget().pending_from("127.0.0.2"), 2u) << "the largest gave one up";
  EXPECT_EQ(l->listener->budget().pending_from("127.0.0.3"), 2u);
  ASSERT_TRUE(l->run_until([&] { return count_dropped(a) == 1; }));
  EXPECT_TRUE(a[0]->dropped) << "its oldest";
  EXPECT_EQ(count_dropped(b), 0u);

  // A source at its own share is still refused, not let in by eviction.
  limits.max_pending_per_source = 2;
  auto m = std::make_unique<Listening>(limits);
  auto held = m->flood_one_by_one("127.0.0.2", 2);
  held.push_back(std::make_unique<IdleSocket>(m->io, "127.0.0.2", m->listener->local_endpoint()));
  ASSERT_TRUE(m->run_until([&] { return count_dropped(held) == 1; }));
  EXPECT_TRUE(held[2]->dropped) << "the newest, past its source's share";
  EXPECT_EQ(m->listener->budget().pending_from("127.0.0.2"), 2u);
}

TEST(ListenerFlood, ASlowLorisIsDroppedAtTheHandshakeDeadlineAndItsSlotFreed) {
  ListenerLimits limits = ListenerLimits::peer_defaults();
  limits.max_handshakes = 4;
  limits.handshake_timeout = seconds(2);  // the honest handshake afterwards must fit in it too
  limits.bundle_timeout = seconds(10);
  Listening l(limits);
  const auto opened = std::chrono::steady_clock::now();
  auto loris = l.flood("127.0.0.2", 4);
  ASSERT_TRUE(l.run_until([&] { return count_dropped(loris) == loris.size(); }));
  // A lower bound only: the listener may not drop them early; how late is the machine's business.
  EXPECT_GE(std::chrono::steady_clock::now() - opened, limits.handshake_timeout);
  ASSERT_TRUE(l.run_until([&] { return l.budget_is_empty(); }));
  ServerEnd client;
  auto bundle = l.connect(client);
  ASSERT_TRUE(l.run_until([&] { return client.ready; }));
}

TEST(ListenerFlood, AdmittedStreamsFromOneAddressAreCapped) {
  ListenerLimits limits = peer_caps_without_deadlines();
  limits.max_admitted_per_source = 2;
  Listening l(limits);
  ServerEnd first_end;
  auto first = l.connect(first_end, 2);
  ASSERT_TRUE(l.run_until([&] { return first_end.ready; }));
  ServerEnd second_end;
  auto second = l.connect(second_end, 1);  // a third stream from 127.0.0.1
  ASSERT_TRUE(l.run_until([&] { return second_end.closed; }));
  EXPECT_FALSE(second_end.ready);
  // Told why, not cut off: a stream refusal before the close frame.
  EXPECT_NE(second_end.error.find("refused the connection: it is full (already 2 streams "
                                  "admitted from 127.0.0.1)"),
            std::string::npos)
      << second_end.error;
  EXPECT_EQ(l.listener->budget().admitted_from("127.0.0.1"), 2u);
  first->close();
  ASSERT_TRUE(l.run_until([&] { return l.budget_is_empty(); }));
}

TEST(ListenerFlood, FailedHandshakesAreSummarisedNotLoggedOneByOne) {
  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "flood", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  ListenerLimits limits = ListenerLimits::peer_defaults();
  limits.handshake_timeout = seconds(1);
  Listening l(limits);
  auto loris = l.flood("127.0.0.2", 6);
  ASSERT_TRUE(l.run_until([&] { return count_dropped(loris) == loris.size(); }));
  l.listener->stop();  // logs the summary not yet due
  spdlog::set_default_logger(previous);
  const std::string text = log.str();
  const auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("connection closed:"), 0u) << text;
  EXPECT_EQ(count("closing a stream before its bundle was complete"), 1u) << text;
  EXPECT_EQ(count("dropped 6 connections from 127.0.0.2"), 1u) << text;
}

}  // namespace
}  // namespace loco::net
