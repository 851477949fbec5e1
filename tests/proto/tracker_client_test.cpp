// A peer's join fails fast and says why (tracker_client.hpp): each way an attempt to connect can
// fail before the first join, counted in a row, and the tracker's own refusal.

#include <gtest/gtest.h>

#include <algorithm>

#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;

// The events the client queued, drained.
std::vector<ClientEvent> drained(TrackerClient& client) {
  std::vector<ClientEvent> out;
  while (auto e = client.poll_event()) out.push_back(std::move(*e));
  return out;
}

// `n` failed attempts of `failure`; the events they made.
std::vector<ClientEvent> after_failures(Harness& h, TrackerClient& client, ConnectFailure failure,
                                        int n) {
  for (int i = 0; i < n; ++i) client.on_connect_failed(h.now, failure, "attempt failed");
  return drained(client);
}

TEST(TrackerClient, AKeyThatIsNotThePinnedOneEndsTheJoinAtOnceAsCrypto) {
  Harness h;
  TrackerClient& client = *h.add(1).client;
  const auto events = after_failures(h, client, ConnectFailure::not_pinned, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::refused);
  EXPECT_EQ(events[0].cause, ErrorCategory::crypto);
  EXPECT_NE(events[0].text.find("[tracker] public-key"), std::string::npos) << events[0].text;
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::not_pinned, 5).empty()) << "said once";
}

TEST(TrackerClient, AHandshakeCutInARowEndsTheJoinAsConfigNamingTheRunId) {
  Harness h;
  TrackerClient& client = *h.add(1).client;
  EXPECT_TRUE(
      after_failures(h, client, ConnectFailure::cut_in_handshake, TrackerClient::kCutsToGiveUp - 1)
          .empty());
  const auto events = after_failures(h, client, ConnectFailure::cut_in_handshake, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::refused);
  EXPECT_EQ(events[0].cause, ErrorCategory::config);
  EXPECT_NE(events[0].text.find("[run] id \"run-h\""), std::string::npos) << events[0].text;
  EXPECT_NE(events[0].text.find("attempt failed"), std::string::npos) << "the driver's reason";
}

TEST(TrackerClient, NoConnectionInARowEndsTheJoinAsNetwork) {
  Harness h;
  TrackerClient& client = *h.add(1).client;
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable,
                             TrackerClient::kUnreachableToGiveUp - 1)
                  .empty());
  const auto events = after_failures(h, client, ConnectFailure::unreachable, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].cause, ErrorCategory::network);
  EXPECT_NE(events[0].text.find("[tracker] address"), std::string::npos) << events[0].text;
}

TEST(TrackerClient, OnlyFailuresOfOneKindInARowCount) {
  Harness h;
  h.start();
  TrackerClient& client = *h.add(1).client;
  const int cuts = TrackerClient::kCutsToGiveUp - 1;
  const int unreachable = TrackerClient::kUnreachableToGiveUp - 1;
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable, unreachable).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::cut_in_handshake, cuts).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable, unreachable).empty());
  // A handshake the tracker did not answer in time says nothing, and breaks the row.
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unanswered, 10).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::cut_in_handshake, cuts).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unanswered, 1).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::cut_in_handshake, cuts).empty());
  // A connection that came up (the tracker restarted meanwhile) starts the count again.
  client.on_connected(h.now);
  client.on_disconnect(h.now);
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::cut_in_handshake, cuts).empty());
}

// A client of a run served by `addresses` replicas (one key, several addresses tried in turn).
TrackerClient replica_client(const Harness& h, std::size_t addresses) {
  return TrackerClient(TrackerClientConfig{.run_id = h.config.run_id,
                                           .tracker_key = h.tracker_key.public_key(),
                                           .join = h.join_request(1),
                                           .addresses = addresses});
}

// One pass over three replicas' addresses, 0.4 s between attempts: `leader` is what the
// attempt at the second address met (the followers do not listen).
std::vector<ClientEvent> after_pass(Harness& h, TrackerClient& client, ConnectFailure leader) {
  for (const ConnectFailure f :
       {ConnectFailure::unreachable, leader, ConnectFailure::unreachable}) {
    client.on_connect_failed(h.now, f, "attempt failed");
    h.now += std::chrono::milliseconds(400);
  }
  return drained(client);
}

TEST(TrackerClient, WithReplicasWholePassesCountAndNoSoonerThanThePatience) {
  Harness h;
  TrackerClient client = replica_client(h, 3);
  // Passes end at 0.8 s, 2.0 s, ... (1.2 s each): the 4th is at 4.4 s, short of the patience,
  // and the 9th, at 10.4 s, the first past it (the row began at 0).
  static_assert(TrackerClient::kReplicaPatience == std::chrono::seconds(10));
  for (int pass = 1; pass < 9; ++pass)
    ASSERT_TRUE(after_pass(h, client, ConnectFailure::unreachable).empty()) << "pass " << pass;
  const auto events = after_pass(h, client, ConnectFailure::unreachable);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::refused);
  EXPECT_EQ(events[0].cause, ErrorCategory::network);
  EXPECT_NE(events[0].text.find("9 passes in a row over its 3 addresses, 10.4 s"),
            std::string::npos)
      << events[0].text;
  EXPECT_NE(events[0].text.find("only the leading replica listens"), std::string::npos);
}

TEST(TrackerClient, WithReplicasALeaderThatCutsTheHandshakeEndsTheJoinAfterWholePasses) {
  Harness h;
  TrackerClient client = replica_client(h, 3);
  // Its followers' refused connections between its cuts do not break the row (they did when
  // attempts were counted one by one, and the join never ended).
  for (int pass = 1; pass < TrackerClient::kCutsToGiveUp; ++pass)
    ASSERT_TRUE(after_pass(h, client, ConnectFailure::cut_in_handshake).empty());
  const auto events = after_pass(h, client, ConnectFailure::cut_in_handshake);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].cause, ErrorCategory::config);
  EXPECT_NE(events[0].text.find("3 passes in a row over its 3 addresses"), std::string::npos)
      << events[0].text;
}

TEST(TrackerClient, WithReplicasALeaderThatLivesKeepsThePeerTrying) {
  Harness h;
  TrackerClient client = replica_client(h, 3);
  // A full leader (it turns the peer away after the handshake) or a silent one: a minute of
  // passes, no verdict.
  for (int pass = 0; pass < 50; ++pass) {
    ASSERT_TRUE(after_pass(h, client, ConnectFailure::turned_away).empty());
    ASSERT_TRUE(after_pass(h, client, ConnectFailure::unanswered).empty());
  }
  // Nothing listens from now on: a new row, which needs the patience again.
  for (int pass = 1; pass < 9; ++pass)
    ASSERT_TRUE(after_pass(h, client, ConnectFailure::unreachable).empty()) << "pass " << pass;
  EXPECT_EQ(after_pass(h, client, ConnectFailure::unreachable).size(), 1u);
}

TEST(TrackerClient, OneTrackerThatTurnsThePeerAwayBreaksARow) {
  Harness h;
  TrackerClient& client = *h.add(1).client;
  const int unreachable = TrackerClient::kUnreachableToGiveUp - 1;
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable, unreachable).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::turned_away, 1).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable, unreachable).empty());
}

TEST(TrackerClient, AMemberReconnectsWhateverTheAttemptsSay) {
  Harness h;
  h.start();
  Harness::Peer& peer = h.join(1);
  ASSERT_TRUE(peer.client->joined());
  h.disconnect(1);
  TrackerClient& client = *peer.client;
  drained(client);
  // The tracker restarts elsewhere, or a man in the middle answers: the member keeps trying (the
  // driver's backoff), as it did before joins failed fast.
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::unreachable, 10).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::cut_in_handshake, 10).empty());
  EXPECT_TRUE(after_failures(h, client, ConnectFailure::not_pinned, 1).empty());
}

TEST(TrackerClient, TheTrackersRefusalIsConfigWithItsReason) {
  Harness h;
  h.start();
  JoinRequest request = h.join_request(1);
  request.settings[0].value = "gpt-4l-d64";
  h.add(1, request);
  h.connect(1);
  const auto& events = h.peers.at(1).events;
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, Kind::refused);
  EXPECT_EQ(events.back().cause, ErrorCategory::config);
  EXPECT_EQ(events.back().text.rfind("the tracker refused this peer: ", 0), 0u)
      << events.back().text;
  EXPECT_NE(events.back().text.find("model"), std::string::npos) << events.back().text;
  // A failed attempt after it makes no second refusal.
  EXPECT_TRUE(after_failures(h, *h.peers.at(1).client, ConnectFailure::not_pinned, 1).empty());
}

// A tracker that lies in its refusal cannot drive the terminal the refusal is shown on: text with
// an escape sequence is a malformed message (the client reconnects), not a refusal; and the
// refusal is bounded (kMaxTextBytes).
TEST(TrackerClient, ARefusalThatWouldDriveATerminalIsNotShown) {
  Harness h;
  TrackerClient& client = *h.add(1).client;
  client.on_connected(h.now);
  const std::string placeholder = "XXXXXXXXXXrefused";
  std::vector<std::byte> body = encode(JoinReply{.accepted = false, .refusal = placeholder});
  const std::string escape = "\x1b]0;pwned\x07\x1b[2J";  // a window title, a cleared screen
  const auto at = std::search(body.begin(), body.end(), placeholder.begin(), placeholder.end(),
                              [](std::byte b, char c) { return b == static_cast<std::byte>(c); });
  ASSERT_NE(at, body.end());
  std::transform(escape.begin(), escape.end(), at,
                 [](char c) { return static_cast<std::byte>(c); });
  client.on_message(h.now, static_cast<std::uint16_t>(MessageType::join_reply), body);
  auto events = drained(client);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::tracker_error);
  EXPECT_EQ(events[0].text.find('\x1b'), std::string::npos) << "the bytes are not repeated";

  // Longer than kMaxTextBytes: what is shown is at most that much of the tracker's text.
  const std::string long_text(kMaxTextBytes + 100, 'a');
  client.on_connected(h.now);
  client.on_message(h.now, static_cast<std::uint16_t>(MessageType::join_reply),
                    encode(JoinReply{.accepted = false, .refusal = long_text}));
  events = drained(client);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, Kind::refused);
  EXPECT_LE(events[0].text.size(), kMaxTextBytes + 64);
}

}  // namespace
}  // namespace loco::proto
