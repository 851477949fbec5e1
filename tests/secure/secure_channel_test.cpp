// Two channels driven against each other in memory: handshake, messages, and every way the bytes
// between them can be wrong.

#include "loco/secure/secure_channel.hpp"

#include <gtest/gtest.h>

#include "../support/raw_peer.hpp"
#include "channel_harness.hpp"
#include "loco/core/error.hpp"

namespace loco::secure {
namespace {

using testing::Bytes;
using testing::ChannelPair;
using testing::concat;
using testing::drain_frames;
using testing::pattern;

// Runs fn, which must throw loco::Error of `category`; returns the message.
template <typename Fn>
std::string expect_error(ErrorCategory category, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), category) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no loco::Error thrown";
  return {};
}

TEST(SecureChannel, HandshakeAuthenticatesBothEndsAndMessagesFlowBothWays) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = pair.responder_config.max_frame_bytes = 1000;
  pair.connect();
  ASSERT_TRUE(pair.initiator_inbox.established);
  ASSERT_TRUE(pair.responder_inbox.established);
  EXPECT_EQ(pair.initiator->peer_identity(), pair.responder_key.public_key());
  EXPECT_EQ(pair.responder->peer_identity(), pair.initiator_key.public_key());

  const Bytes big = pattern(5500, 1);  // six frames: 5 × 1000 + 500
  const Bytes small = pattern(10, 2);
  pair.initiator->send_message(pair.now, 7, big);
  pair.initiator->send_message(pair.now, 8, {});
  pair.responder->send_message(pair.now, 9, small);
  pair.pump();
  ASSERT_EQ(pair.responder_inbox.messages.size(), 2u);
  EXPECT_EQ(pair.responder_inbox.messages[0].type, 7);
  EXPECT_EQ(pair.responder_inbox.messages[0].bytes, big);
  EXPECT_EQ(pair.responder_inbox.messages[1].type, 8);
  EXPECT_TRUE(pair.responder_inbox.messages[1].bytes.empty());
  ASSERT_EQ(pair.initiator_inbox.messages.size(), 1u);
  EXPECT_EQ(pair.initiator_inbox.messages[0].bytes, small);

  pair.initiator->close(pair.now);
  pair.pump();
  EXPECT_TRUE(pair.responder_inbox.closed);
  EXPECT_NO_THROW(pair.responder->handle_eof());
}

// Sent frames are reused while more are queued, but an idle channel keeps no frame-sized buffer:
// a tracker's full view to a newcomer (in 64 KiB frames) would otherwise leave its frames on each
// of 10,000 connections for as long as they last.
TEST(SecureChannel, AnIdleChannelKeepsNoFrameSizedBuffer) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = 64 << 10;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(700'000, 1));  // 11 frames
  pair.pump();
  EXPECT_LT(pair.initiator->held_transmit_bytes(), 1'000u) << "nothing queued: nothing kept";
  pair.initiator->send_message(pair.now, 2, pattern(100, 2));
  pair.pump();
  EXPECT_LT(pair.initiator->held_transmit_bytes(), 1'000u);
  ASSERT_EQ(pair.responder_inbox.messages.size(), 2u);
  EXPECT_EQ(pair.responder_inbox.messages[0].bytes, pattern(700'000, 1));

  // While frames are queued, a sent one is reused for the next: two frames' worth, not three.
  pair.initiator->send_message(pair.now, 3, pattern(60'000, 3));  // one frame each
  pair.initiator->send_message(pair.now, 3, pattern(60'000, 4));
  const std::size_t two = pair.initiator->held_transmit_bytes();
  const auto first = pair.initiator->poll_transmit();
  pair.initiator->handle_transmitted(pair.now, first.size());
  pair.initiator->send_message(pair.now, 3, pattern(60'000, 5));
  EXPECT_EQ(pair.initiator->held_transmit_bytes(), two);
}

TEST(SecureChannel, FramesCarryTheSizeTheCodecPromises) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = 1000;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(2500, 0));
  const auto frames = drain_frames(*pair.initiator, pair.now);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].size(), sealed_frame_size(1000));
  EXPECT_EQ(frames[2].size(), sealed_frame_size(500));
}

TEST(SecureChannel, ResponderRejectsAnInitiatorItDoesNotAccept) {
  ChannelPair pair;
  pair.responder_accepts = [](const PublicKey&) { return false; };
  pair.create();
  const std::string message = expect_error(ErrorCategory::crypto, [&] { pair.pump(); });
  EXPECT_NE(message.find(short_id(pair.initiator_key.public_key())), std::string::npos) << message;
  EXPECT_FALSE(pair.responder_inbox.established);
}

TEST(SecureChannel, InitiatorRejectsAResponderOtherThanThePinnedKey) {
  ChannelPair pair;
  const PublicKey pinned = KeyPair::generate().public_key();
  pair.initiator_accepts = [pinned](const PublicKey& k) { return k == pinned; };
  pair.create();
  expect_error(ErrorCategory::crypto, [&] { pair.pump(); });
  EXPECT_FALSE(pair.initiator_inbox.established);
  EXPECT_FALSE(pair.responder_inbox.established);  // message 3 never went out
}

TEST(SecureChannel, ConnectionForAnotherRunIsRejected) {
  ChannelPair pair;
  pair.responder_config.run_id = "run-2";
  pair.create();
  const std::string message = expect_error(ErrorCategory::protocol, [&] { pair.pump(); });
  EXPECT_NE(message.find("another run"), std::string::npos) << message;
}

TEST(SecureChannel, AnyFlippedBitInTheHandshakeFailsIt) {
  for (std::size_t message = 0; message < 3; ++message) {
    for (std::size_t bit : {0u, 77u, 300u, 600u}) {
      ChannelPair pair;
      pair.create();
      // Exchange the handshake one message at a time, flipping `bit` in message `message`.
      bool failed = false;
      try {
        for (std::size_t step = 0; step < 3; ++step) {
          SecureChannel& from = step == 1 ? *pair.responder : *pair.initiator;
          SecureChannel& to = step == 1 ? *pair.initiator : *pair.responder;
          auto& inbox = step == 1 ? pair.initiator_inbox : pair.responder_inbox;
          Bytes bytes = drain_frames(from, pair.now).at(0);
          if (step == message) bytes[(bit / 8) % bytes.size()] ^= std::byte(1u << (bit % 8));
          deliver(to, pair.now, bytes, inbox);
        }
      } catch (const Error&) {
        failed = true;
      }
      EXPECT_TRUE(failed) << "message " << message + 1 << " bit " << bit;
      EXPECT_FALSE(pair.initiator_inbox.established && pair.responder_inbox.established);
    }
  }
}

TEST(SecureChannel, AFlippedBitInAnyPartOfAFrameIsDetected) {
  // Header fields, ciphertext and tag: every bit position of a small frame.
  const std::size_t frame_bytes = sealed_frame_size(20);
  for (std::size_t bit = 0; bit < 8 * frame_bytes; ++bit) {
    ChannelPair pair;
    pair.connect();
    pair.initiator->send_message(pair.now, 3, pattern(20, 9));
    Bytes frame = concat(drain_frames(*pair.initiator, pair.now));
    ASSERT_EQ(frame.size(), frame_bytes);
    frame[bit / 8] ^= std::byte(1u << (bit % 8));
    bool failed = false;
    try {
      deliver(*pair.responder, pair.now, frame, pair.responder_inbox);
      pair.responder->handle_eof();  // a frame that claims to be longer is still waiting
    } catch (const Error&) {
      failed = true;
    }
    ASSERT_TRUE(failed) << "bit " << bit;
    EXPECT_TRUE(pair.responder_inbox.messages.empty()) << "bit " << bit;
  }
}

TEST(SecureChannel, ReplayedFrameIsRejected) {
  ChannelPair pair;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(30, 1));
  const Bytes first = concat(drain_frames(*pair.initiator, pair.now));
  deliver(*pair.responder, pair.now, first, pair.responder_inbox);
  ASSERT_EQ(pair.responder_inbox.messages.size(), 1u);
  const std::string message = expect_error(ErrorCategory::crypto, [&] {
    deliver(*pair.responder, pair.now, first, pair.responder_inbox);
  });
  EXPECT_NE(message.find("replayed"), std::string::npos) << message;
  EXPECT_EQ(pair.responder_inbox.messages.size(), 1u);
}

TEST(SecureChannel, ReorderedFramesAreRejected) {
  ChannelPair pair;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(30, 1));
  pair.initiator->send_message(pair.now, 2, pattern(30, 2));
  const auto frames = drain_frames(*pair.initiator, pair.now);
  ASSERT_EQ(frames.size(), 2u);
  expect_error(ErrorCategory::crypto,
               [&] { deliver(*pair.responder, pair.now, frames[1], pair.responder_inbox); });
  EXPECT_TRUE(pair.responder_inbox.messages.empty());
}

TEST(SecureChannel, OversizedMessageIsRejectedNamingThePeer) {
  ChannelPair pair;
  pair.responder_config.max_message_bytes = 1000;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(1001, 0));
  const std::string message = expect_error(ErrorCategory::resource, [&] { pair.pump(); });
  EXPECT_NE(message.find(short_id(pair.initiator_key.public_key())), std::string::npos) << message;
  EXPECT_TRUE(pair.responder_inbox.messages.empty());
  // The sender refuses too when the message exceeds its own limit.
  expect_error(ErrorCategory::resource, [&] { pair.responder->begin_message(pair.now, 1, 1001); });
}

TEST(SecureChannel, OversizedFrameIsRejectedBeforeItsBodyArrives) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = 4096;
  pair.responder_config.max_frame_bytes = 512;
  pair.connect();
  pair.initiator->send_message(pair.now, 1, pattern(4096, 0));
  const Bytes frame = concat(drain_frames(*pair.initiator, pair.now));
  const Bytes header_only(frame.begin(), frame.begin() + kFrameHeaderBytes);
  expect_error(ErrorCategory::resource,
               [&] { deliver(*pair.responder, pair.now, header_only, pair.responder_inbox); });
}

TEST(SecureChannel, TruncationIsDetectedAndACleanCloseIsNot) {
  {  // cut in the middle of a message
    ChannelPair pair;
    pair.initiator_config.max_frame_bytes = 100;
    pair.connect();
    pair.initiator->send_message(pair.now, 1, pattern(250, 0));
    const auto frames = drain_frames(*pair.initiator, pair.now);
    deliver(*pair.responder, pair.now, frames[0], pair.responder_inbox);
    const std::string message =
        expect_error(ErrorCategory::network, [&] { pair.responder->handle_eof(); });
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
  {  // every message arrived but the close frame was cut off
    ChannelPair pair;
    pair.connect();
    pair.initiator->send_message(pair.now, 1, pattern(10, 0));
    pair.initiator->close(pair.now);
    const auto frames = drain_frames(*pair.initiator, pair.now);
    ASSERT_EQ(frames.size(), 2u);
    deliver(*pair.responder, pair.now, frames[0], pair.responder_inbox);
    EXPECT_EQ(pair.responder_inbox.messages.size(), 1u);
    expect_error(ErrorCategory::network, [&] { pair.responder->handle_eof(); });
    deliver(*pair.responder, pair.now, frames[1], pair.responder_inbox);
    EXPECT_TRUE(pair.responder_inbox.closed);
    EXPECT_NO_THROW(pair.responder->handle_eof());
    // Nothing may follow the close frame.
    expect_error(ErrorCategory::protocol,
                 [&] { deliver(*pair.responder, pair.now, frames[0], pair.responder_inbox); });
  }
}

TEST(SecureChannel, StalledHandshakeTimesOutAtTheConfiguredDeadline) {
  ChannelPair pair;
  pair.responder_config.handshake_timeout = std::chrono::seconds(3);
  pair.create();
  const TimePoint deadline = pair.now + std::chrono::seconds(3);
  EXPECT_EQ(pair.responder->poll_timeout(), deadline);
  EXPECT_NO_THROW(pair.responder->handle_timeout(deadline - std::chrono::nanoseconds(1)));
  expect_error(ErrorCategory::network, [&] { pair.responder->handle_timeout(deadline); });
}

TEST(SecureChannel, IdleAndProgressTimeoutsFollowTheLastBytes) {
  ChannelPair pair;
  pair.responder_config.idle_timeout = std::chrono::seconds(100);
  pair.responder_config.progress_timeout = std::chrono::seconds(5);
  pair.initiator_config.max_frame_bytes = 100;
  pair.connect();
  EXPECT_EQ(pair.responder->poll_timeout(), pair.now + std::chrono::seconds(100));
  // Half a message arrives at t = 1 s: the progress timeout now applies.
  pair.initiator->send_message(pair.now, 1, pattern(200, 0));
  const auto frames = drain_frames(*pair.initiator, pair.now);
  const TimePoint t1 = pair.now + std::chrono::seconds(1);
  deliver(*pair.responder, t1, frames[0], pair.responder_inbox);
  EXPECT_EQ(pair.responder->poll_timeout(), t1 + std::chrono::seconds(5));
  expect_error(ErrorCategory::network,
               [&] { pair.responder->handle_timeout(t1 + std::chrono::seconds(5)); });
}

TEST(SecureChannel, SendStallClockStartsWhenAMessageIsQueuedNotAtTheLastSend) {
  ChannelPair pair;
  pair.initiator_config.idle_timeout = std::chrono::hours(1);
  pair.initiator_config.progress_timeout = std::chrono::seconds(5);
  pair.connect();
  const TimePoint later = pair.now + std::chrono::seconds(100);  // idle since the handshake
  pair.initiator->send_message(later, 1, pattern(10, 0));
  EXPECT_EQ(pair.initiator->poll_timeout(), later + std::chrono::seconds(5));
  EXPECT_NO_THROW(pair.initiator->handle_timeout(later + std::chrono::seconds(4)));
  expect_error(ErrorCategory::network,
               [&] { pair.initiator->handle_timeout(later + std::chrono::seconds(5)); });
}

// A real responder channel facing an authenticated peer that seals frames by hand.
struct AttackedChannel {
  KeyPair attacker_key = KeyPair::generate();
  KeyPair victim_key = KeyPair::generate();
  test::RawPeer attacker{attacker_key, "run-1"};
  std::unique_ptr<SecureChannel> victim;
  testing::Inbox inbox;

  AttackedChannel() {
    ChannelConfig config;
    config.run_id = "run-1";
    victim = std::make_unique<SecureChannel>(
        Role::responder, victim_key, config, [](const PublicKey&) { return true; }, "attacker",
        TimePoint{}, fresh_ephemeral_seed());
    feed(attacker.take());
    attacker.give(concat(drain_frames(*victim, TimePoint{})));
    feed(attacker.take());
  }
  void feed(const Bytes& bytes) { deliver(*victim, TimePoint{}, bytes, inbox); }
};

TEST(SecureChannel, AMessageKeepsTheSizeAndTypeOfItsFirstChunk) {
  const Bytes chunk = pattern(100, 3);
  {  // growing: the attack that used to abort the stripe assembler behind the channel
    AttackedChannel c;
    c.feed(c.attacker.data(5, 4096, 0, chunk));
    const auto message = expect_error(ErrorCategory::protocol,
                                      [&] { c.feed(c.attacker.data(5, 1 << 20, 100, chunk)); });
    EXPECT_NE(message.find("changed a message's size or type mid-message"), std::string::npos)
        << message;
  }
  {  // shrinking: used to report a message of 4,096 bytes complete after 200 of them
    AttackedChannel c;
    c.feed(c.attacker.data(5, 4096, 0, chunk));
    expect_error(ErrorCategory::protocol, [&] { c.feed(c.attacker.data(5, 200, 100, chunk)); });
    EXPECT_TRUE(c.inbox.messages.empty());
  }
  {  // another type
    AttackedChannel c;
    c.feed(c.attacker.data(5, 4096, 0, chunk));
    expect_error(ErrorCategory::protocol, [&] { c.feed(c.attacker.data(6, 4096, 100, chunk)); });
  }
  {  // the same size and type go through
    AttackedChannel c;
    c.feed(c.attacker.data(5, 200, 0, chunk));
    c.feed(c.attacker.data(5, 200, 100, chunk));
    ASSERT_EQ(c.inbox.messages.size(), 1u);
    EXPECT_EQ(c.inbox.messages[0].bytes.size(), 200u);
  }
}

TEST(SecureChannel, OffsetsMustContinueTheOpenMessage) {
  const Bytes chunk = pattern(100, 4);
  AttackedChannel c;
  c.feed(c.attacker.data(5, 400, 0, chunk));
  const auto message =
      expect_error(ErrorCategory::protocol, [&] { c.feed(c.attacker.data(5, 400, 200, chunk)); });
  EXPECT_NE(message.find("at offset 200 where 100 was due"), std::string::npos) << message;
}

TEST(SecureChannel, AnAlteredHeaderIsReportedAsAlteredNotBlamedOnThePeer) {
  // A flipped high bit of message_size used to be reported as "peer ... sent a message of
  // 9223372036854775908 bytes" before the tag was checked.
  ChannelPair pair;
  pair.connect();
  pair.initiator->send_message(pair.now, 3, pattern(100, 1));
  Bytes frame = concat(drain_frames(*pair.initiator, pair.now));
  frame[15] ^= std::byte{0x80};  // the top bit of message_size
  const std::string message = expect_error(ErrorCategory::crypto, [&] {
    deliver(*pair.responder, pair.now, frame, pair.responder_inbox);
  });
  EXPECT_NE(message.find("does not authenticate"), std::string::npos) << message;
  EXPECT_EQ(message.find("sent a message"), std::string::npos) << message;
}

TEST(SecureChannel, TheReceiveBufferGrowsAsAFramesBytesArrive) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = 1 << 20;
  pair.responder_config.max_frame_bytes = 1 << 20;
  pair.connect();
  pair.initiator->send_message(pair.now, 3, pattern(1 << 20, 2));
  const Bytes frame = concat(drain_frames(*pair.initiator, pair.now));
  // The header announces 1 MiB; the channel offers a small first read, then doubles it as bytes
  // arrive, at most one read step at a time: never 1 MiB at once.
  deliver(*pair.responder, pair.now, std::span(frame).first(kFrameHeaderBytes),
          pair.responder_inbox);
  EXPECT_EQ(pair.responder->read_buffer().size(), SecureChannel::kFirstReadBytes);
  deliver(*pair.responder, pair.now,
          std::span(frame).subspan(kFrameHeaderBytes, SecureChannel::kFirstReadBytes),
          pair.responder_inbox);
  EXPECT_EQ(pair.responder->read_buffer().size(), SecureChannel::kFirstReadBytes);
  deliver(*pair.responder, pair.now,
          std::span(frame).subspan(kFrameHeaderBytes + SecureChannel::kFirstReadBytes,
                                   SecureChannel::kReadStepBytes),
          pair.responder_inbox);
  EXPECT_EQ(pair.responder->read_buffer().size(), SecureChannel::kReadStepBytes);
  deliver(*pair.responder, pair.now,
          std::span(frame).subspan(kFrameHeaderBytes + SecureChannel::kFirstReadBytes +
                                   SecureChannel::kReadStepBytes),
          pair.responder_inbox);
  ASSERT_EQ(pair.responder_inbox.messages.size(), 1u);
  EXPECT_EQ(pair.responder_inbox.messages[0].bytes, pattern(1 << 20, 2));
}

TEST(SecureChannel, LimitIncomingRefusesLargerFramesAndMessagesFromThenOn) {
  ChannelPair pair;
  pair.initiator_config.max_frame_bytes = 1000;
  pair.connect();
  pair.responder->limit_incoming(1024, 4096);
  // Within both limits: taken.
  pair.initiator->send_message(pair.now, 3, pattern(3000, 1));
  deliver(*pair.responder, pair.now, concat(drain_frames(*pair.initiator, pair.now)),
          pair.responder_inbox);
  ASSERT_EQ(pair.responder_inbox.messages.size(), 1u);
  // A message above the new limit is refused by its first frame.
  pair.initiator->send_message(pair.now, 3, pattern(5000, 2));
  const Bytes big = concat(drain_frames(*pair.initiator, pair.now));
  std::string message = expect_error(ErrorCategory::resource, [&] {
    deliver(*pair.responder, pair.now, big, pair.responder_inbox);
  });
  EXPECT_NE(message.find("more than the limit of 4096 bytes"), std::string::npos) << message;
  // A frame above the new frame limit is refused from its header.
  ChannelPair second;
  second.connect();
  second.responder->limit_incoming(512, 4096);
  second.initiator->send_message(second.now, 3, pattern(600, 3));
  const Bytes frame = concat(drain_frames(*second.initiator, second.now));
  message = expect_error(ErrorCategory::resource, [&] {
    deliver(*second.responder, second.now, std::span(frame).first(kFrameHeaderBytes),
            second.responder_inbox);
  });
  EXPECT_NE(message.find("above our frame limit of 512 bytes"), std::string::npos) << message;
}

TEST(SecureChannel, TheRunTagDiffersOnEveryConnectionOfARun) {
  // Message 1 is magic ‖ run tag ‖ ephemeral key: the tag is bound to the connection's ephemeral
  // key, so two connections of one run cannot be linked by it.
  ChannelPair first, second;
  first.create();
  second.create();
  const Bytes one = concat(drain_frames(*first.initiator, first.now));
  const Bytes two = concat(drain_frames(*second.initiator, second.now));
  ASSERT_EQ(one.size(), Handshake::kMessage1Bytes);
  ASSERT_EQ(two.size(), Handshake::kMessage1Bytes);
  EXPECT_FALSE(std::equal(one.begin() + 8, one.begin() + 40, two.begin() + 8));
}

TEST(SecureChannel, TheSameEphemeralSeedsReplayTheSameConnection) {
  // Randomness comes from the caller: a fuzzer or a simulation replays a handshake exactly.
  const auto transcript = [] {
    ChannelPair pair;
    pair.initiator_key = KeyPair::from_seed(std::array<std::uint8_t, 32>{1});
    pair.responder_key = KeyPair::from_seed(std::array<std::uint8_t, 32>{2});
    pair.initiator_seed = EphemeralSeed{3};
    pair.responder_seed = EphemeralSeed{4};
    pair.create();
    Bytes all = concat(drain_frames(*pair.initiator, pair.now));
    deliver(*pair.responder, pair.now, all, pair.responder_inbox);
    const Bytes reply = concat(drain_frames(*pair.responder, pair.now));
    all.insert(all.end(), reply.begin(), reply.end());
    return all;
  };
  EXPECT_EQ(transcript(), transcript());
}

}  // namespace
}  // namespace loco::secure
