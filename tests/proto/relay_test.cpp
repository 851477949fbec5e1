// Relays for two unreachable members (docs/PROTOCOL.md, "Relays"): the tracker's plan (who
// relays which pair, how many unreachable members a group can take, the ring order), the relay's
// routing core, the messages and their malformed forms, and the tracker's answer to a member that
// blames its relay.

#include <gtest/gtest.h>

#include "loco/core/error.hpp"
#include "loco/proto/relay_core.hpp"
#include "loco/proto/relay_messages.hpp"
#include "loco/proto/relay_plan.hpp"
#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;

PeerKey relay_key(std::uint8_t n) {
  return key(n).public_key();
}

RelaySeat open_seat(std::uint8_t n, std::uint32_t pairs) {
  return RelaySeat{
      .key = relay_key(n), .unreachable = false, .relay_pairs = pairs, .barred = false};
}
RelaySeat closed_seat(std::uint8_t n) {
  return RelaySeat{.key = relay_key(n), .unreachable = true, .relay_pairs = 8, .barred = false};
}

// --- the plan ---

TEST(RelayPlan, AGroupTakesAsManyUnreachableMembersAsItsRelaysLink) {
  EXPECT_EQ(max_unreachable(std::vector<RelaySeat>{}, RelayLinks::every_pair), 1u)
      << "one needs no relay";
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 0), closed_seat(2)}, RelayLinks::every_pair),
            1u);
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 1)}, RelayLinks::every_pair), 2u);  // 1 pair
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 2)}, RelayLinks::every_pair),
            2u);  // 3 are 3 pairs
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 3)}, RelayLinks::every_pair), 3u);
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 4), open_seat(2, 2)}, RelayLinks::every_pair),
            4u);  // 6 pairs
  RelaySeat barred = open_seat(3, 100);
  barred.barred = true;
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 1), barred}, RelayLinks::every_pair), 2u)
      << "a barred relay counts 0";
  EXPECT_EQ(max_unreachable(std::vector{closed_seat(1), closed_seat(2)}, RelayLinks::every_pair),
            1u)
      << "an unreachable member relays nothing, whatever it declares";
}

TEST(RelayPlan, EveryPairOfUnreachableMembersGetsARelaySpreadOverTheBudgets) {
  // Order: 0 open(2), 1 closed, 2 open(2), 3 closed, 4 closed.
  const std::vector seats{open_seat(1, 2), closed_seat(2), open_seat(3, 2), closed_seat(4),
                          closed_seat(5)};
  const std::vector<RelayRoute> routes = plan_relays(seats, RelayLinks::every_pair);
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0], (RelayRoute{.a = 1, .b = 3, .via = 0}));
  EXPECT_EQ(routes[1], (RelayRoute{.a = 1, .b = 4, .via = 2})) << "the one with most left";
  EXPECT_EQ(routes[2], (RelayRoute{.a = 3, .b = 4, .via = 0}));
}

// A ring links neighbours only: interleaved, r reachable members take r unreachable ones with no
// relay, and each relayed link past that one more.
TEST(RelayPlan, ARingRelaysOnlyNeighboursThatAreBothUnreachable) {
  const auto ring = RelayLinks::ring_neighbours;
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 0), open_seat(2, 0)}, ring), 2u);
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 3), open_seat(2, 0)}, ring), 5u);
  EXPECT_EQ(max_unreachable(std::vector{closed_seat(1), closed_seat(2)}, ring), 1u);
  // A cap on relayed links: 2 reachable members and 2 of their 3 budgeted links.
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 3), open_seat(2, 0)}, ring, 2), 4u);
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 3), open_seat(2, 0)}, ring, 9), 5u);
  EXPECT_EQ(max_unreachable(std::vector{open_seat(1, 6)}, RelayLinks::every_pair, 1), 2u);
  // Ring order o c o c c c: links 3-4 and 4-5 relayed; 5-0 is a reachable neighbour.
  const std::vector seats{open_seat(1, 1), closed_seat(2), open_seat(3, 1),
                          closed_seat(4),  closed_seat(5), closed_seat(6)};
  const std::vector<RelayRoute> routes = plan_relays(seats, ring);
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0], (RelayRoute{.a = 3, .b = 4, .via = 0}));
  EXPECT_EQ(routes[1], (RelayRoute{.a = 4, .b = 5, .via = 2}));
  // The last member's neighbour is the first.
  const std::vector wrap{closed_seat(1), open_seat(2, 1), closed_seat(3)};
  const std::vector<RelayRoute> around = plan_relays(wrap, ring);
  ASSERT_EQ(around.size(), 1u);
  EXPECT_EQ(around[0], (RelayRoute{.a = 0, .b = 2, .via = 1}));
  EXPECT_TRUE(plan_relays(std::vector{closed_seat(1), closed_seat(2)}, ring).size() <= 1u);
}

TEST(RelayPlan, ABarredMemberRelaysNothing) {
  std::vector seats{open_seat(1, 4), open_seat(2, 4), closed_seat(3), closed_seat(4)};
  seats[0].barred = true;
  const std::vector<RelayRoute> routes = plan_relays(seats, RelayLinks::every_pair);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].via, 1u);
}

TEST(RelayPlan, TheRingPutsUnreachableMembersBetweenReachableOnes) {
  const std::vector seats{open_seat(1, 1), open_seat(2, 1), closed_seat(3), closed_seat(4),
                          closed_seat(5)};
  EXPECT_EQ(interleave_unreachable(seats),
            (std::vector{relay_key(1), relay_key(3), relay_key(2), relay_key(4), relay_key(5)}));
  const std::vector open{open_seat(1, 1), open_seat(2, 1)};
  EXPECT_EQ(interleave_unreachable(open), (std::vector{relay_key(1), relay_key(2)}))
      << "all reachable: the order is kept";
}

// --- the relay's core ---

std::span<const std::byte> relay_bytes(const std::vector<std::byte>& v) {
  return {v.data(), v.size()};
}

TEST(RelayCore, ForwardsOnlyThePairsItsGroupGaveIt) {
  RelayCore relay(RelayBudget{.max_pairs = 4, .max_bytes_per_attempt = 0});
  relay.set_routes(5, 1, {{relay_key(1), relay_key(2)}});
  const std::vector<std::byte> payload(100);
  EXPECT_EQ(relay
                .route(relay_key(1), RelayHeader{.round = 5, .attempt = 1, .peer = relay_key(2)},
                       relay_bytes(payload))
                .action,
            RelayCore::Action::forward);
  EXPECT_EQ(relay
                .route(relay_key(2), RelayHeader{.round = 5, .attempt = 1, .peer = relay_key(1)},
                       relay_bytes(payload))
                .action,
            RelayCore::Action::forward)
      << "both ways";
  const auto other =
      relay.route(relay_key(1), RelayHeader{.round = 5, .attempt = 1, .peer = relay_key(3)},
                  relay_bytes(payload));
  EXPECT_EQ(other.action, RelayCore::Action::refuse);
  EXPECT_NE(other.refusal.find("does not relay that pair"), std::string::npos) << other.refusal;
  EXPECT_EQ(relay.bytes_relayed(), 200u);
  EXPECT_EQ(relay.refused(), 1u);
  EXPECT_EQ(relay
                .route(relay_key(1), RelayHeader{.round = 4, .attempt = 9, .peer = relay_key(2)},
                       relay_bytes(payload))
                .action,
            RelayCore::Action::dropped)
      << "an earlier attempt's: its ends moved on";
}

TEST(RelayCore, RefusesPastItsBudget) {
  RelayCore relay(RelayBudget{.max_pairs = 1, .max_bytes_per_attempt = 150});
  relay.set_routes(1, 1, {{relay_key(1), relay_key(2)}, {relay_key(3), relay_key(4)}});
  EXPECT_EQ(relay.pairs(), 1u);
  const std::vector<std::byte> payload(100);
  const RelayHeader to_2{.round = 1, .attempt = 1, .peer = relay_key(2)};
  EXPECT_EQ(relay.route(relay_key(1), to_2, relay_bytes(payload)).action,
            RelayCore::Action::forward);
  const auto bytes = relay.route(relay_key(1), to_2, relay_bytes(payload));
  EXPECT_EQ(bytes.action, RelayCore::Action::refuse);
  EXPECT_NE(bytes.refusal.find("150 bytes per attempt"), std::string::npos) << bytes.refusal;
  const auto pairs =
      relay.route(relay_key(3), RelayHeader{.round = 1, .attempt = 1, .peer = relay_key(4)},
                  relay_bytes(payload));
  EXPECT_NE(pairs.refusal.find("at most 1 pairs"), std::string::npos) << pairs.refusal;
  relay.set_routes(1, 2, {{relay_key(1), relay_key(2)}});
  EXPECT_EQ(relay
                .route(relay_key(1), RelayHeader{.round = 1, .attempt = 2, .peer = relay_key(2)},
                       relay_bytes(payload))
                .action,
            RelayCore::Action::forward)
      << "the byte budget is per attempt";
}

// The tracker sends the group to every member at once; an end may hear sooner than its relay.
TEST(RelayCore, HoldsWhatComesBeforeItsGroupAndReleasesItWithTheGroup) {
  RelayCore relay(RelayBudget{});
  const std::vector<std::byte> payload{std::byte{1}, std::byte{2}};
  const RelayHeader early{.round = 3, .attempt = 2, .peer = relay_key(2)};
  EXPECT_EQ(relay.route(relay_key(1), early, relay_bytes(payload)).action, RelayCore::Action::held);
  EXPECT_EQ(relay.held_bytes(), 2u);
  relay.set_routes(3, 1, {});
  EXPECT_TRUE(relay.take_released().empty()) << "still early for attempt 1";
  relay.set_routes(3, 2, {{relay_key(1), relay_key(2)}});
  std::vector<RelayCore::Held> released = relay.take_released();
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].from, relay_key(1));
  EXPECT_EQ(released[0].payload, payload);
  EXPECT_EQ(
      relay.route(released[0].from, released[0].header, relay_bytes(released[0].payload)).action,
      RelayCore::Action::forward);
  EXPECT_EQ(relay.held_bytes(), 0u);
}

TEST(RelayCore, HoldsABoundedAmount) {
  RelayCore relay(RelayBudget{});
  const std::vector<std::byte> payload(RelayCore::kMaxHeldBytes / 2);
  const RelayHeader early{.round = 9, .attempt = 1, .peer = relay_key(2)};
  EXPECT_EQ(relay.route(relay_key(1), early, relay_bytes(payload)).action, RelayCore::Action::held);
  EXPECT_EQ(relay.route(relay_key(1), early, relay_bytes(payload)).action, RelayCore::Action::held);
  EXPECT_EQ(relay.route(relay_key(1), early, relay_bytes(payload)).action,
            RelayCore::Action::refuse);
  relay.clear();
  EXPECT_EQ(relay.held_bytes(), 0u);
}

// --- the messages ---

TEST(RelayMessages, RoundTrip) {
  const std::vector<std::byte> payload{std::byte{7}, std::byte{8}, std::byte{9}};
  const RelayHeader header{.round = 12, .attempt = 3, .peer = relay_key(4)};
  const std::vector<std::byte> body = encode_relay_data(header, payload);
  EXPECT_EQ(body.size(), kRelayHeaderBytes + payload.size());
  const RelayData data = decode_relay_data(body);
  EXPECT_EQ(data.header.round, 12u);
  EXPECT_EQ(data.header.attempt, 3u);
  EXPECT_EQ(data.header.peer, relay_key(4));
  EXPECT_TRUE(std::equal(data.payload.begin(), data.payload.end(), payload.begin(), payload.end()));

  const RelayRefused refused =
      decode_relay_refused(encode(RelayRefused{.peer = relay_key(5), .reason = "full"}));
  EXPECT_EQ(refused.peer, relay_key(5));
  EXPECT_EQ(refused.reason, "full");

  const auto [type, inner] =
      decode_plain_payload(encode_plain_payload(MessageType::ring_chunk, payload));
  EXPECT_EQ(type, static_cast<std::uint16_t>(MessageType::ring_chunk));
  EXPECT_EQ(inner.size(), 3u);
}

TEST(RelayMessages, AnEndTakesOnlyPeersMessagesWithinTheirLimitOutOfAPayload) {
  const auto u16 = [](MessageType t) { return static_cast<std::uint16_t>(t); };
  const std::size_t chunk_limit = info(MessageType::ring_chunk).max_bytes;
  EXPECT_TRUE(relayable(u16(MessageType::ring_chunk), chunk_limit));
  EXPECT_FALSE(relayable(u16(MessageType::ring_chunk), chunk_limit + 1)) << "over its limit";
  EXPECT_FALSE(relayable(u16(MessageType::heartbeat), 1)) << "a tracker's message";
  EXPECT_FALSE(relayable(u16(MessageType::relay_data), 1)) << "a relay's own, nested";
  EXPECT_FALSE(relayable(u16(MessageType::relay_refused), 1)) << "a relay's own";
  EXPECT_FALSE(relayable(0xfffe, 1)) << "no such type";
}

TEST(RelayMessages, MalformedBodiesAreRefusedBeforeAnythingIsAllocated) {
  const std::vector<std::byte> body =
      encode_relay_data(RelayHeader{.round = 1, .attempt = 1, .peer = relay_key(1)}, {});
  for (std::size_t cut = 0; cut < body.size(); ++cut)
    EXPECT_THROW(decode_relay_data(std::span(body).first(cut)), Error) << "cut at " << cut;
  std::vector<std::byte> other_version = body;
  other_version[0] = std::byte{9};
  EXPECT_THROW(decode_relay_data(other_version), Error);
  // One byte over the type's limit: refused on its size, before its header is read.
  const std::vector<std::byte> huge(info(MessageType::relay_data).max_bytes + 1);
  EXPECT_THROW(decode_relay_data(huge), Error);

  const std::vector<std::byte> refused = encode(RelayRefused{.peer = relay_key(1), .reason = "x"});
  for (std::size_t cut = 0; cut < refused.size(); ++cut)
    EXPECT_THROW(decode_relay_refused(std::span(refused).first(cut)), Error) << "cut at " << cut;
  std::vector<std::byte> trailing = refused;
  trailing.push_back(std::byte{0});
  EXPECT_THROW(decode_relay_refused(trailing), Error);
  EXPECT_THROW(decode_plain_payload(std::vector<std::byte>{std::byte{1}}), Error);
}

TEST(RelayMessages, AGroupsRoutesRoundTripAndBadIndicesAreRefused) {
  Group g{
      .round = 2, .attempt = 1, .epoch = 1, .members = {relay_key(1), relay_key(2), relay_key(3)}};
  g.relays = {RelayRoute{.a = 1, .b = 2, .via = 0}};
  EXPECT_EQ(decode<Group>(encode(g)).relays, g.relays);
  for (const RelayRoute bad :
       {RelayRoute{.a = 2, .b = 1, .via = 0}, RelayRoute{.a = 1, .b = 3, .via = 0},
        RelayRoute{.a = 1, .b = 2, .via = 2}, RelayRoute{.a = 0, .b = 1, .via = 7}}) {
    g.relays = {bad};
    // Encoded by hand: the encoder writes what it is given.
    EXPECT_THROW(decode<Group>(encode(g)), Error) << bad.a << " " << bad.b << " " << bad.via;
  }
  // A count of routes the body cannot hold is refused before anything is reserved.
  g.relays = {RelayRoute{.a = 1, .b = 2, .via = 0}};
  std::vector<std::byte> body = encode(g);
  const std::size_t count_at = body.size() - 12 - 4;
  body[count_at + 3] = std::byte{0x7f};
  EXPECT_THROW(decode<Group>(body), Error);

  JoinRequest j;
  j.relay_pairs = 6;
  EXPECT_EQ(decode<JoinRequest>(encode(j)).relay_pairs, 6u);
}

// --- the tracker ---

using Kind = ClientEvent::Kind;
using Answer = Harness::Peer::Probe;

void relay_join(Harness& h, std::uint8_t n, Answer answer, std::uint32_t relay_pairs) {
  JoinRequest r = h.join_request(n);
  r.relay_pairs = relay_pairs;
  h.add(n, r).probe = answer;
  h.connect(n);
}

// Two reachable members (budgets 2 and 1) and three unreachable ones: all five in one group,
// each unreachable one between reachable ones where it can be, three relayed links.
Harness relay_group_of_five() {
  Harness h;
  h.start();
  relay_join(h, 1, Answer::reached, 2);
  relay_join(h, 2, Answer::reached, 1);
  relay_join(h, 3, Answer::refused, 4);
  relay_join(h, 4, Answer::refused, 4);
  relay_join(h, 5, Answer::refused, 4);
  h.run_for(std::chrono::seconds(1));
  for (std::uint8_t n = 1; n <= 5; ++n) h.ready(n);
  h.run_for(h.config.join_timeout);
  return h;
}

TEST(TrackerRelays, AGroupHoldsSeveralUnreachableMembersThroughRelays) {
  Harness h = relay_group_of_five();
  const auto group = h.last(1, Kind::group);
  ASSERT_TRUE(group.has_value());
  const Group& g = group->group;
  ASSERT_EQ(g.members.size(), 5u);
  const auto reachable = [](const PeerKey& k) { return k == relay_key(1) || k == relay_key(2); };
  std::vector<bool> pattern;
  for (const PeerKey& k : g.members) pattern.push_back(reachable(k));
  EXPECT_EQ(pattern, (std::vector<bool>{true, false, true, false, false}))
      << "each unreachable member after a reachable one while they last";
  ASSERT_EQ(g.relays.size(), 3u);
  std::map<std::uint32_t, int> load;
  for (const RelayRoute& r : g.relays) {
    EXPECT_FALSE(g.members[r.via] == relay_key(3) || g.members[r.via] == relay_key(4) ||
                 g.members[r.via] == relay_key(5));
    ++load[r.via];
  }
  for (const auto& [via, links] : load)
    EXPECT_EQ(links, g.members[via] == relay_key(1) ? 2 : 1) << "each relay's budget, all used";
  EXPECT_EQ(h.tracker->status(h.now).relayed_links, 3u);
  EXPECT_EQ(h.tracker->status(h.now).members_left_out, 0u);
}

TEST(TrackerRelays, MoreUnreachableMembersThanTheBudgetsLinkSitOut) {
  Harness h;
  h.start();
  relay_join(h, 1, Answer::reached, 1);  // one pair: two unreachable members at most
  for (std::uint8_t n = 2; n <= 4; ++n) relay_join(h, n, Answer::refused, 4);
  h.run_for(std::chrono::seconds(1));
  for (std::uint8_t n = 1; n <= 4; ++n) h.ready(n);
  h.run_for(h.config.join_timeout);
  const auto group = h.last(1, Kind::group);
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->group.members.size(), 3u);
  EXPECT_EQ(group->group.relays.size(), 1u);
  EXPECT_EQ(h.tracker->status(h.now).members_left_out, 1u);
}

void relay_blame(Harness& h, std::uint8_t from, const Group& g, const PeerKey& relay) {
  h.peers.at(from).client->round_failed(RoundFailed{.round = g.round,
                                                    .attempt = g.attempt,
                                                    .reason = "lost the link through the relay",
                                                    .suspect = relay});
  h.pump();
}

// A relay that drops costs one attempt: the ends that blame it are not excluded, the retry goes
// at once with every member and another relay; an end that blames relays again sits out.
TEST(TrackerRelays, ABlamedRelayCarriesNothingMoreThisRoundAndTheEndsStay) {
  Harness h = relay_group_of_five();
  const Group first = h.last(1, Kind::group)->group;
  const RelayRoute route = first.relays[0];
  const PeerKey relay = first.members[route.via];
  const std::uint8_t end = *h.find(first.members[route.a]);
  relay_blame(h, end, first, relay);
  const Group second = h.last(1, Kind::group)->group;
  EXPECT_GT(second.attempt, first.attempt) << "retried at once, no accusation grace";
  EXPECT_EQ(h.tracker->status(h.now).relays_blamed, 1u);
  // The budget left (member 2's one pair) links two of the three unreachable members: one sits
  // the retry out for want of a relay, not for blame.
  ASSERT_EQ(second.members.size(), 4u);
  ASSERT_EQ(second.relays.size(), 1u);
  EXPECT_EQ(second.members[second.relays[0].via], relay_key(2));
  const PeerKey other_end = second.members[second.relays[0].a] == relay_key(end)
                                ? second.members[second.relays[0].b]
                                : second.members[second.relays[0].a];
  EXPECT_TRUE(std::find(second.members.begin(), second.members.end(), relay_key(end)) !=
              second.members.end())
      << "the end that blamed its relay stays";
  EXPECT_TRUE(std::find(second.members.begin(), second.members.end(), relay) !=
              second.members.end())
      << "so does the relay: it only relays nothing more this round";

  // Blaming a relay again in the same round is taken as the end's own failure.
  relay_blame(h, end, second, relay_key(2));
  const Group third = h.last(1, Kind::group)->group;
  EXPECT_GT(third.attempt, second.attempt);
  EXPECT_TRUE(std::find(third.members.begin(), third.members.end(), relay_key(end)) ==
              third.members.end());
  EXPECT_TRUE(std::find(third.members.begin(), third.members.end(), other_end) !=
              third.members.end());
  EXPECT_EQ(h.tracker->status(h.now).relays_blamed, 1u);
}

}  // namespace
}  // namespace loco::proto
