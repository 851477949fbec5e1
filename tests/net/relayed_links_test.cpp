// The end-to-end channel of a relayed link (net/relayed_links.hpp), in process: two ends and a
// relay (proto::RelayCore) that moves their relay_data. The ends authenticate each other through
// the relay, their messages arrive whole, and a relay that changes, drops or replays a byte, or an
// impostor at the other end, ends the link at the end that notices.

#include "loco/net/relayed_links.hpp"

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/proto/relay_core.hpp"

namespace loco::net {
namespace {

secure::KeyPair relayed_key(std::uint8_t n) {
  std::array<std::uint8_t, 32> seed{};
  seed[0] = n;
  seed[31] = 0x5a;
  return secure::KeyPair::from_seed(seed);
}

// Two ends, 1 and 2, and relay 3; `tamper` may change or drop what the relay forwards.
struct RelayedPair {
  secure::KeyPair key1 = relayed_key(1);
  secure::KeyPair key2 = relayed_key(2);
  secure::KeyPair key3 = relayed_key(3);
  RelayedLinks end1{key1, "run-r"};
  RelayedLinks end2{key2, "run-r"};
  proto::RelayCore relay{proto::RelayBudget{}};
  TimePoint now{};
  std::function<bool(std::vector<std::byte>&)> tamper;  // false: dropped
  std::size_t forwarded = 0;
  std::vector<RelayedLinks::Message> got1, got2;
  std::vector<RelayedLinks::Lost> lost1, lost2;

  RelayedPair() { relay.set_routes(1, 1, {{key1.public_key(), key2.public_key()}}); }

  proto::RelayHeader to(const secure::KeyPair& k) const {
    return proto::RelayHeader{.round = 1, .attempt = 1, .peer = k.public_key()};
  }

  // Moves bytes until nothing moves: each end's relay_data through the relay to the other.
  void run() {
    for (bool moved = true; moved;) {
      moved = false;
      moved |= hop(end1, key1, end2);
      moved |= hop(end2, key2, end1);
    }
    while (auto m = end1.poll_message()) got1.push_back(std::move(*m));
    while (auto m = end2.poll_message()) got2.push_back(std::move(*m));
    while (auto l = end1.poll_lost()) lost1.push_back(std::move(*l));
    while (auto l = end2.poll_lost()) lost2.push_back(std::move(*l));
  }

  bool hop(RelayedLinks& from, const secure::KeyPair& from_key, RelayedLinks& to_end) {
    bool moved = false;
    while (auto t = from.poll_transmit()) {
      moved = true;
      EXPECT_EQ(t->relay, key3.public_key());
      const proto::RelayData in = proto::decode_relay_data(t->body);
      const auto verdict = relay.route(from_key.public_key(), in.header, in.payload);
      if (verdict.action != proto::RelayCore::Action::forward) continue;
      std::vector<std::byte> out =
          proto::encode_relay_data(proto::RelayHeader{.round = in.header.round,
                                                      .attempt = in.header.attempt,
                                                      .peer = from_key.public_key()},
                                   in.payload);
      ++forwarded;
      if (tamper && !tamper(out)) continue;
      to_end.on_relay_data(now, key3.public_key(), proto::decode_relay_data(out));
    }
    return moved;
  }
};

std::vector<std::byte> relayed_body(std::size_t n, std::uint8_t fill) {
  return std::vector<std::byte>(n, std::byte{fill});
}

TEST(RelayedLinks, TheEndsTalkThroughTheRelayWhoeverSendsFirst) {
  for (const bool initiator_first : {true, false}) {
    RelayedPair p;
    // Key order decides who initiates; either may have something to send first.
    RelayedLinks& first =
        initiator_first == (p.key1.public_key() < p.key2.public_key()) ? p.end1 : p.end2;
    const bool first_is_1 = &first == &p.end1;
    first.send(p.now, p.key3.public_key(), p.to(first_is_1 ? p.key2 : p.key1),
               proto::MessageType::ring_chunk, relayed_body(1000, 7));
    p.run();
    const auto& got = first_is_1 ? p.got2 : p.got1;
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].from, (first_is_1 ? p.key1 : p.key2).public_key());
    EXPECT_EQ(got[0].type, proto::MessageType::ring_chunk);
    EXPECT_EQ(got[0].body, relayed_body(1000, 7));
    // A message larger than one relay_data goes in pieces and arrives whole.
    p.end2.send(p.now, p.key3.public_key(), p.to(p.key1), proto::MessageType::all_gather_part,
                relayed_body(RelayedLinks::kMaxPayloadBytes * 3 + 17, 9));
    p.run();
    ASSERT_FALSE(p.got1.empty());
    EXPECT_EQ(p.got1.back().body.size(), RelayedLinks::kMaxPayloadBytes * 3 + 17);
    EXPECT_TRUE(p.lost1.empty());
    EXPECT_TRUE(p.lost2.empty());
  }
}

TEST(RelayedLinks, ARelayThatChangesAByteEndsTheLink) {
  RelayedPair p;
  p.end1.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
              relayed_body(100, 1));
  p.run();
  ASSERT_EQ(p.got1.size() + p.got2.size(), 1u);
  const std::size_t before = p.forwarded;
  p.tamper = [&](std::vector<std::byte>& body) {
    body.back() ^= std::byte{1};  // the last byte of the payload: in the AEAD tag or the text
    return true;
  };
  p.end1.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
              relayed_body(100, 2));
  p.run();
  EXPECT_GT(p.forwarded, before);
  EXPECT_EQ(p.got2.size(), 1u) << "the changed message is not delivered";
  ASSERT_EQ(p.lost2.size(), 1u);
  EXPECT_EQ(p.lost2[0].peer, p.key1.public_key()) << "the link with the other end, not the relay";
}

TEST(RelayedLinks, ARelayThatDropsOrReplaysBreaksTheChannel) {
  RelayedPair p;
  p.end1.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
              relayed_body(100, 1));
  p.run();
  std::vector<std::byte> last;
  p.tamper = [&](std::vector<std::byte>& body) {
    last = body;
    return true;
  };
  p.end1.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
              relayed_body(100, 3));
  p.run();
  ASSERT_EQ(p.got2.size(), 2u);
  p.end2.on_relay_data(p.now, p.key3.public_key(), proto::decode_relay_data(last));  // replayed
  p.run();
  EXPECT_EQ(p.got2.size(), 2u);
  ASSERT_EQ(p.lost2.size(), 1u);
}

TEST(RelayedLinks, AnImpostorAtTheOtherEndIsRefused) {
  RelayedPair p;
  // Key 4 runs the handshake in key 1's place: end 2 expects key 1's identity.
  const secure::KeyPair impostor_key = relayed_key(4);
  RelayedLinks impostor{impostor_key, "run-r"};
  const bool impostor_initiates = impostor_key.public_key() < p.key2.public_key();
  impostor.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
                relayed_body(10, 1));
  // What the impostor sends, handed to end 2 as key 1's (the relay lies about the sender).
  for (int i = 0; i < 8; ++i) {
    while (auto t = impostor.poll_transmit()) {
      proto::RelayData d = proto::decode_relay_data(t->body);
      d.header.peer = p.key1.public_key();
      p.end2.on_relay_data(p.now, p.key3.public_key(), d);
    }
    while (auto t = p.end2.poll_transmit()) {
      proto::RelayData d = proto::decode_relay_data(t->body);
      d.header.peer = impostor_key.public_key();
      impostor.on_relay_data(p.now, p.key3.public_key(), d);
    }
  }
  EXPECT_FALSE(p.end2.poll_message().has_value());
  // Whichever end the roles made wait: by its handshake's deadline at the latest.
  p.now += std::chrono::seconds(31);
  p.end2.on_timer(p.now);
  const auto lost = p.end2.poll_lost();
  ASSERT_TRUE(lost.has_value()) << (impostor_initiates ? "impostor initiates" : "end 2 initiates");
  EXPECT_EQ(lost->peer, p.key1.public_key());
}

TEST(RelayedLinks, BytesOfAnOlderAttemptAreIgnoredAndANewerOneStartsAfresh) {
  RelayedPair p;
  p.end1.send(p.now, p.key3.public_key(), p.to(p.key2), proto::MessageType::ring_chunk,
              relayed_body(10, 1));
  p.run();
  ASSERT_EQ(p.got1.size() + p.got2.size(), 1u);
  EXPECT_EQ(p.end1.links(), 1u);
  p.relay.set_routes(1, 2, {{p.key1.public_key(), p.key2.public_key()}});
  p.end2.send(p.now, p.key3.public_key(),
              proto::RelayHeader{.round = 1, .attempt = 2, .peer = p.key1.public_key()},
              proto::MessageType::ring_chunk, relayed_body(10, 2));
  p.run();
  ASSERT_EQ(p.got1.size(), 1u) << "a new channel for attempt 2";
  EXPECT_EQ(p.got1[0].body, relayed_body(10, 2));
  EXPECT_TRUE(p.lost1.empty());
  EXPECT_TRUE(p.lost2.empty());
}

}  // namespace
}  // namespace loco::net
