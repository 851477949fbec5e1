// The tracker's reachability probe at join (proto/tracker_core.hpp, "Reachability"), in virtual
// time: the measurement, not the peer, decides what the signed view says; probes are bounded in
// number and frequency; and a round's group never holds two members that cannot link.

#include <gtest/gtest.h>

#include "loco/proto/link_direction.hpp"
#include "loco/proto/tracker_core.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using namespace testing;
using Kind = ClientEvent::Kind;
using Answer = Harness::Peer::Probe;

// What peer `viewer` holds about peer `n` in its latest view.
Reachability listed(const Harness& h, std::uint8_t viewer, std::uint8_t n) {
  const Member* m = h.peers.at(viewer).client->member(key(n).public_key());
  return m != nullptr ? m->reachability : Reachability::unmeasured;
}

void join_answering(Harness& h, std::uint8_t n, Answer answer) {
  h.add(n).probe = answer;
  h.connect(n);
}

TEST(TrackerReachability, TheViewListsWhatTheProbeFound) {
  Harness h;
  h.start();
  join_answering(h, 1, Answer::reached);
  join_answering(h, 2, Answer::refused);
  h.run_for(std::chrono::seconds(1));  // the next view goes out
  for (std::uint8_t viewer = 1; viewer <= 2; ++viewer) {
    EXPECT_EQ(listed(h, viewer, 1), Reachability::reachable);
    EXPECT_EQ(listed(h, viewer, 2), Reachability::unreachable);
  }
  const TrackerStatus s = h.tracker->status(h.now);
  EXPECT_EQ(s.members_reachable, 1u);
  EXPECT_EQ(s.members_unreachable, 1u);
  EXPECT_EQ(s.probes_reached, 1u);
  EXPECT_EQ(s.probes_unreached, 1u);
}

// No answer is the core's decision, at exactly probe_timeout: the driver need not report one.
TEST(TrackerReachability, AProbeWithoutAnswerIsUnreachableAtTheTimeout) {
  Harness h;
  h.config.probe_timeout = std::chrono::seconds(3);
  h.start();
  join_answering(h, 1, Answer::unanswered);
  const TimePoint joined = h.now;
  h.run_until(joined + std::chrono::seconds(3) - std::chrono::milliseconds(1));
  EXPECT_EQ(h.tracker->status(h.now).members_unreachable, 0u) << "still being measured";
  h.run_until(joined + std::chrono::seconds(4));
  EXPECT_EQ(h.tracker->status(h.now).members_unreachable, 1u);
  EXPECT_EQ(listed(h, 1, 1), Reachability::unreachable);
}

// A result for another address than the one registered now (the peer joined again elsewhere
// meanwhile), or for a probe the core gave up on, changes nothing.
TEST(TrackerReachability, AResultForAnotherAddressOrALateOneIsIgnored) {
  Harness h;
  h.start();
  join_answering(h, 1, Answer::unanswered);
  h.tracker->on_probe_result(h.now, key(1).public_key(), "10.9.9.9:1", true);
  h.pump();
  EXPECT_EQ(h.tracker->status(h.now).members_reachable, 0u);
  h.run_for(h.config.probe_timeout + std::chrono::seconds(1));
  h.tracker->on_probe_result(h.now, key(1).public_key(), h.join_request(1).listen_address, true);
  h.pump();
  EXPECT_EQ(h.tracker->status(h.now).members_reachable, 0u) << "too late: measured unreachable";
}

JoinRequest at_port(const Harness& h, std::uint8_t n, int port) {
  JoinRequest r = h.join_request(n);
  r.listen_address = "127.0.0.1:" + std::to_string(port);
  return r;
}

// Peer n's process restarts: its tracker link drops, and it joins again listening at `port`.
void restart_at(Harness& h, std::uint8_t n, int port, Answer answer) {
  h.disconnect(n);
  h.add(n, at_port(h, n, port)).probe = answer;
  h.connect(n);
}

// A restarted peer listens on a new port: its earlier probe says nothing about it, so it is probed
// there again, whenever its key was last probed (issue 49: it was listed unreachable unprobed).
TEST(TrackerReachability, ARestartedPeerAtANewAddressIsProbedAgain) {
  Harness h;
  h.config.probe_interval = std::chrono::seconds(60);
  h.start();
  join_answering(h, 1, Answer::reached);
  h.run_for(std::chrono::seconds(1));
  ASSERT_EQ(listed(h, 1, 1), Reachability::reachable);
  restart_at(h, 1, 9501, Answer::reached);
  h.run_for(std::chrono::seconds(1));
  EXPECT_EQ(listed(h, 1, 1), Reachability::reachable);
  EXPECT_EQ(h.tracker->status(h.now).probes_reached, 2u);
  EXPECT_EQ(h.tracker->status(h.now).probes_unreached, 0u);
}

// A join at the same address is probed again too (a new process may be reachable now), and is
// listed as the last probe there found meanwhile, not as unmeasured.
TEST(TrackerReachability, AJoinAgainAtTheSameAddressIsProbedAndKeepsItsMeasurementMeanwhile) {
  Harness h;
  h.start();
  join_answering(h, 1, Answer::refused);
  h.run_for(std::chrono::seconds(1));
  ASSERT_EQ(listed(h, 1, 1), Reachability::unreachable);
  h.disconnect(1);
  h.peers.at(1).probe = Answer::unanswered;
  h.connect(1);
  EXPECT_EQ(h.tracker->status(h.now).members_unreachable, 1u) << "as the last probe there found";
  h.run_for(h.config.probe_timeout + std::chrono::seconds(1));
  h.disconnect(1);
  h.peers.at(1).probe = Answer::reached;  // its operator forwarded the port
  h.connect(1);
  h.run_for(std::chrono::seconds(1));
  EXPECT_EQ(listed(h, 1, 1), Reachability::reachable);
}

// Joining again and again cannot make the tracker dial at will: a key is probed at most
// probes_per_interval times in any probe_interval. A join past that is not listed unreachable
// unprobed: its probe waits until the oldest of those is an interval old, and it is listed
// unmeasured until then (a new address) or as measured there before.
TEST(TrackerReachability, AKeyIsProbedAtMostProbesPerIntervalTimes) {
  Harness h;
  h.config.probe_interval = std::chrono::seconds(60);
  h.config.probes_per_interval = 3;
  h.start();
  join_answering(h, 1, Answer::refused);
  const TimePoint first = h.now;
  for (int port = 9100; port < 9110; ++port) {  // a liar joins again in a loop, each time elsewhere
    h.run_for(std::chrono::milliseconds(100));
    restart_at(h, 1, port, Answer::refused);
  }
  EXPECT_EQ(h.tracker->status(h.now).probes_unreached, 3u);
  EXPECT_EQ(h.tracker->status(h.now).members_unreachable, 0u) << "not listed without a probe";
  h.run_until(first + std::chrono::seconds(60) - std::chrono::milliseconds(1));
  EXPECT_EQ(h.tracker->status(h.now).probes_unreached, 3u);
  h.run_until(first + std::chrono::seconds(61));
  EXPECT_EQ(h.tracker->status(h.now).probes_unreached, 4u) << "its waiting probe, at the interval";
  EXPECT_EQ(listed(h, 1, 1), Reachability::unreachable);
}

// Many keys naming one address (a third party's) get it dialled at most probes_per_interval
// times in any interval, whoever they are.
TEST(TrackerReachability, AnAddressIsProbedAtMostProbesPerIntervalTimes) {
  Harness h;
  h.config.probes_per_interval = 2;
  h.start();
  for (std::uint8_t n = 1; n <= 6; ++n) {
    h.add(n, at_port(h, n, 80)).probe = Answer::refused;
    h.connect(n);
  }
  EXPECT_EQ(h.tracker->status(h.now).probes_unreached, 2u);
  EXPECT_EQ(h.tracker->status(h.now).members_unreachable, 2u);
}

// At most max_probes are under way; the others wait their turn and are probed as slots free.
TEST(TrackerReachability, AtMostMaxProbesAreUnderWay) {
  Harness h;
  h.config.max_probes = 2;
  h.start();
  std::vector<Probe> asked;
  for (std::uint8_t n = 1; n <= 5; ++n) {
    h.add(n).probe = Answer::unanswered;
    h.peers.at(n).connected = true;
    h.peers.at(n).client->on_connected(h.now);
    // Moves the messages without answering: the probes are read here instead.
    for (bool moved = true; moved;) {
      moved = false;
      while (auto t = h.tracker->poll_transmit())
        h.peers.at(n).client->on_message(h.now, static_cast<std::uint16_t>(t->type), *t->body);
      while (auto o = h.peers.at(n).client->poll_transmit()) {
        moved = true;
        h.tracker->on_message(h.now, key(n).public_key(), static_cast<std::uint16_t>(o->type),
                              o->body);
      }
    }
    while (auto p = h.tracker->poll_probe()) asked.push_back(*p);
  }
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].peer, key(1).public_key());
  EXPECT_EQ(asked[1].peer, key(2).public_key());
  EXPECT_EQ(asked[0].address, h.join_request(1).listen_address) << "the registered address only";
  h.tracker->on_probe_result(h.now, asked[0].peer, asked[0].address, true);
  const auto next = h.tracker->poll_probe();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->peer, key(3).public_key());
  EXPECT_FALSE(h.tracker->poll_probe().has_value());
}

// Two unreachable members link only through a relay: with no reachable member offering one (the
// harness's peers declare no relay budget), a round takes one of them (another each round), tells
// the others why, and does not wait for them.
TEST(TrackerReachability, AGroupHoldsAtMostOneUnreachableMember) {
  Harness h;
  h.start();
  join_answering(h, 1, Answer::reached);
  join_answering(h, 2, Answer::refused);
  join_answering(h, 3, Answer::refused);
  h.run_for(std::chrono::seconds(1));
  for (std::uint8_t n = 1; n <= 3; ++n) h.ready(n);
  h.run_for(h.config.join_timeout);
  const auto group = h.last(1, Kind::group);
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->group.members.size(), 2u);
  std::size_t told = 0;
  for (std::uint8_t n = 2; n <= 3; ++n) {
    const auto abort = h.last(n, Kind::abort_round);
    if (abort && !abort->abort.retry) {
      ++told;
      EXPECT_NE(abort->abort.reason.find("relays' budgets"), std::string::npos);
    }
  }
  EXPECT_EQ(told, 1u);
  EXPECT_EQ(h.tracker->status(h.now).members_left_out, 1u);
}

// A fetch is opened by the fetcher: a donor nobody can dial is never named, whoever fetches.
TEST(TrackerReachability, OnlyReachableMembersAreNamedDonors) {
  Harness h;
  h.start();
  join_answering(h, 1, Answer::reached);
  join_answering(h, 2, Answer::refused);
  h.run_for(std::chrono::seconds(1));
  h.ready(1);
  h.ready(2);
  h.run_for(h.config.join_timeout);
  h.finish_round();
  ASSERT_EQ(h.tracker->snapshot().committed_round, 1u);
  const auto donors_of = [&](std::uint8_t n) {
    const auto resync = h.last(n, Kind::resync);
    std::vector<PeerKey> keys;
    if (resync)
      for (const Donor& d : resync->resync.donors) keys.push_back(d.key);
    return keys;
  };
  join_answering(h, 3, Answer::refused);  // holds round 0: told to fetch round 1
  EXPECT_EQ(donors_of(3), std::vector<PeerKey>{key(1).public_key()});
  join_answering(h, 4, Answer::reached);
  EXPECT_EQ(donors_of(4), std::vector<PeerKey>{key(1).public_key()});
}

TEST(LinkDirection, TheUnreachableEndDials) {
  using R = Reachability;
  EXPECT_EQ(link_direction(R::reachable, R::reachable), LinkDirection::own_links);
  EXPECT_EQ(link_direction(R::unreachable, R::reachable), LinkDirection::dial);
  EXPECT_EQ(link_direction(R::reachable, R::unreachable), LinkDirection::await);
  EXPECT_EQ(link_direction(R::unmeasured, R::reachable), LinkDirection::own_links)
      << "not measured yet counts as reachable, as before the probe existed";
  EXPECT_EQ(link_direction(R::unreachable, R::unmeasured), LinkDirection::dial);
  EXPECT_EQ(link_direction(R::unmeasured, R::unreachable), LinkDirection::await);
  EXPECT_EQ(link_direction(R::unreachable, R::unreachable), LinkDirection::unlinkable);
  EXPECT_EQ(send_on(R::reachable, R::unmeasured, false), SendOn::own);
  EXPECT_EQ(send_on(R::reachable, R::unreachable, false), SendOn::their);
  EXPECT_EQ(send_on(R::unreachable, R::reachable, false), SendOn::own);
}

// An answer goes back on the link the asker opened, which its request came on: the asker's own
// (not an older process of its key this peer dialled), except when this peer is the one that
// dials, whose link the request came on.
TEST(LinkDirection, AnAnswerGoesOnTheLinkTheAskerOpened) {
  using R = Reachability;
  EXPECT_EQ(send_on(R::reachable, R::reachable, true), SendOn::asker);
  EXPECT_EQ(send_on(R::unmeasured, R::reachable, true), SendOn::asker);
  EXPECT_EQ(send_on(R::reachable, R::unreachable, true), SendOn::asker);
  EXPECT_EQ(send_on(R::unreachable, R::unreachable, true), SendOn::asker);
  EXPECT_EQ(send_on(R::unreachable, R::reachable, true), SendOn::own);
}

}  // namespace
}  // namespace loco::proto
