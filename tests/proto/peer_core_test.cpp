// PeerCore, the peer's whole protocol, with a real TrackerCore in virtual time: peers' messages
// delivered in memory, timers fired at their deadlines, processes killed at chosen points. The
// faults here are the ones only sanitized real-process runs found before the peer had one core
// (a stale fetch, a repeated resync, messages of a group not started yet, a member lost mid-round).

#include "loco/proto/peer_core.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include "all_reduce_harness.hpp"
#include "loco/proto/encoded_update.hpp"
#include "peer_core_net.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::kDim;
using testing::key;
using testing::Net;
using testing::State;
using namespace std::chrono_literals;

TEST(PeerCore, ARoundAveragesEveryMembersUpdateAndCommitsOneState) {
  Net net;
  for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  net.ready(3, 6.0f);
  for (std::uint8_t n = 1; n <= 3; ++n) {
    const auto means = net.events(n, PeerEvent::Kind::mean);
    ASSERT_EQ(means.size(), 1u) << "peer " << int(n);
    EXPECT_EQ(means[0].members.size(), 3u);
    // The direct exchange trims ⌈0.25 · 3⌉ = 1 contribution from each side: the median, 2.
    EXPECT_EQ(means[0].trim, 1u);
    EXPECT_FLOAT_EQ(means[0].mean->values()[0], 2.0f);
    const auto commits = net.events(n, PeerEvent::Kind::committed);
    ASSERT_EQ(commits.size(), 1u);
    EXPECT_TRUE(commits[0].mine);
    EXPECT_EQ(net.peers.at(n).state.round, 1u);
  }
  EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(3).state.theta);
}

// Rounds bounded by time: the tracker weighs each update by its member's tokens (clamped), and
// every member ends with the same bits of the weighted mean and knows its own share. (In a group
// of two the lower median is the slower member's claim: the faster counts twice that at most.)
TEST(PeerCore, AWeightedRoundAveragesByTokensAndALiarGetsTwiceTheMedianAtMost) {
  constexpr std::uint64_t kStep = 256;
  Net net;
  net.config.token_weighting = TokenWeighting{.step_tokens = kStep, .max_ratio = 2};
  net.tracker = std::make_unique<TrackerCore>(net.config, net.tracker_key, std::nullopt, net.now);
  for (std::uint8_t n = 1; n <= 2; ++n) net.add(n);
  net.ready(1, 1.0f, 30 * kStep);
  net.ready(2, 4.0f, 20 * kStep);  // slower, and a larger update
  for (std::uint8_t n = 1; n <= 2; ++n) {
    const auto means = net.events(n, PeerEvent::Kind::mean);
    ASSERT_EQ(means.size(), 1u) << "peer " << int(n);
    EXPECT_NEAR(means[0].mean->values()[0], (30.0f * 1.0f + 20.0f * 4.0f) / 50.0f, 1e-5);
    EXPECT_NEAR(means[0].share, n == 1 ? 0.6 : 0.4, 1e-6);
    EXPECT_TRUE(net.events(n, PeerEvent::Kind::committed).at(0).mine);
  }
  EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(2).state.theta);
  // Round 2: peer 2 claims far more than it could have trained: it counts twice peer 1.
  net.ready(1, 1.0f, 30 * kStep);
  net.ready(2, 4.0f, std::uint64_t{1} << 50);
  const auto mean = net.events(1, PeerEvent::Kind::mean).at(1);
  EXPECT_NEAR(mean.mean->values()[0], (1.0f + 2.0f * 4.0f) / 3.0f, 1e-5);
  EXPECT_NEAR(net.events(2, PeerEvent::Kind::mean).at(1).share, 2.0 / 3.0, 1e-6);
}

// A member behind a NAT dials: it opens its link to each reachable member of its group
// (link_open) at the group's start, and they send to it only on that link; it sends on its own.
TEST(PeerCore, AReachableMemberSendsToAnUnreachableOneOnTheLinkItOpened) {
  Net net;
  net.behind_nat = {2};
  for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
  net.run_for(1s);  // the view with the probes' outcomes
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  net.ready(3, 6.0f);
  const PeerKey behind = key(2).public_key();
  std::size_t opened = 0;
  std::size_t to_it = 0;
  for (const auto& w : net.sent) {
    if (w.from == behind) {
      EXPECT_EQ(w.on, SendOn::own) << "it dials";
      opened += w.type == MessageType::link_open;
    } else if (w.to == behind) {
      EXPECT_EQ(w.on, SendOn::their) << "others answer on its link";
      ++to_it;
    } else {
      EXPECT_EQ(w.on, SendOn::own) << "two reachable members: each on its own";
    }
  }
  EXPECT_EQ(opened, 2u) << "one link_open to each reachable member, before its chunks";
  EXPECT_GT(to_it, 0u);
  for (std::uint8_t n = 1; n <= 3; ++n)
    EXPECT_EQ(net.events(n, PeerEvent::Kind::committed).size(), 1u) << "peer " << int(n);
  const auto noted = net.events(2, PeerEvent::Kind::note);
  EXPECT_TRUE(std::any_of(noted.begin(), noted.end(), [](const PeerEvent& e) {
    return e.text.find("not reachable from the internet") != std::string::npos;
  })) << "it says what the tracker found";
}

TEST(PeerCore, ChunksOfAGroupThisPeerHasNotHeardOfYetWaitForIt) {
  Net net;
  for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
  net.peers.at(3).hold_groups = true;  // its group message is slow; the others' chunks are not
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  net.ready(3, 6.0f);
  ASSERT_GT(net.peers.at(3).received[MessageType::ring_chunk], 0);
  EXPECT_TRUE(net.events(3, PeerEvent::Kind::mean).empty());
  net.release_groups(3);
  for (std::uint8_t n = 1; n <= 3; ++n)
    ASSERT_EQ(net.events(n, PeerEvent::Kind::committed).size(), 1u) << "peer " << int(n);
  EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(3).state.theta);
}

TEST(PeerCore, AMemberKilledMidExchangeIsNamedAndTheSurvivorsCommitWithoutIt) {
  Net net;
  for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
  // Peer 3 dies on the first chunk it receives: it never sends its own segment's mean.
  net.die_on_first_message(3);
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  net.ready(3, 6.0f);
  ASSERT_FALSE(net.peers.at(3).up);
  net.on_wire = {};
  net.kill(3);
  net.run_for(30s);
  for (std::uint8_t n = 1; n <= 2; ++n) {
    const auto commits = net.events(n, PeerEvent::Kind::committed);
    ASSERT_EQ(commits.size(), 1u) << "peer " << int(n);
    EXPECT_TRUE(commits[0].mine);
    EXPECT_GE(net.events(n, PeerEvent::Kind::aborted).size(), 1u);
    EXPECT_EQ(net.events(n, PeerEvent::Kind::mean).back().members.size(), 2u);
  }
  EXPECT_FLOAT_EQ(net.peers.at(1).state.theta[0], 0.5f + 1.5f);  // the survivors' mean
  EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(2).state.theta);
}

// The direct exchange encodes a member's update once a round (encoded_update.hpp) and writes the
// mean into the update's own buffer. A retry after the mean (a member left before its report
// reached the tracker: attempt 2, a smaller group) sends the same encoded bytes again, cut into the
// smaller group's segments, and every member ends with the same bits; with plain owners (each
// owner sums its own contribution as encoded, as the others receive it) and checked ones.
TEST(PeerCore, ARetryAfterTheMeanSendsTheKeptEncodedUpdateAndEveryMemberGetsTheSameBits) {
  const std::size_t kChunk = direct_chunk_values(kDim, 256);  // 63 units of 1000 values
  const std::string spec = "int8:block=64,round=stochastic";
  const auto codec = compress::make_codec(spec);
  for (const bool checked : {false, true}) {
    SCOPED_TRACE(checked ? "checked owners" : "plain owners");
    Net net(spec);
    net.config.check_owners = checked;
    net.tracker = std::make_unique<TrackerCore>(net.config, net.tracker_key, std::nullopt, net.now);
    for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
    // Every reduce-scatter chunk on the wire: its sender, attempt, receiver, index and bytes.
    struct Contribution {
      PeerKey from, to;
      std::uint32_t attempt, chunk;
      std::vector<std::byte> payload;
    };
    std::vector<Contribution> sent;
    net.on_wire = [&](const Net::Wire& w) {
      std::span<const std::byte> payload;
      if (w.type != MessageType::ring_chunk) return true;
      const ChunkHeader h = decode_chunk(w.body, payload);
      if (h.phase == 0)
        sent.push_back({w.from, w.to, h.attempt, h.chunk, {payload.begin(), payload.end()}});
      return true;
    };
    const auto deltas = testing::random_vectors(3, kDim, 17);
    std::map<std::uint8_t, std::weak_ptr<std::vector<float>>> handed;
    net.peers.at(3).hold_groups = true;
    for (std::uint8_t n = 1; n <= 3; ++n) {
      Net::Peer& p = net.peers.at(n);
      auto delta = std::make_shared<std::vector<float>>(deltas[n - 1]);
      handed[n] = delta;
      double squares = 0;
      for (const float x : *delta) squares += static_cast<double>(x) * x;
      p.core->ready(Ready{.round = 1,
                          .update_norm = static_cast<float>(std::sqrt(squares)),
                          .base_hash = p.state.manifest().state_hash(),
                          .tokens = 0},
                    std::move(delta));
      net.pump();
    }
    // Peer 3 takes part in attempt 1 but its report never reaches the tracker; then it leaves.
    net.peers.at(3).tracker_link = false;
    net.release_groups(3);
    for (std::uint8_t n = 1; n <= 3; ++n)
      ASSERT_EQ(net.events(n, PeerEvent::Kind::mean).size(), 1u) << "peer " << int(n);
    ASSERT_TRUE(net.events(1, PeerEvent::Kind::committed).empty());
    net.kill(3);
    net.run_for(30s);

    std::map<std::uint32_t, std::vector<PeerKey>> groups;  // by attempt
    for (std::uint8_t n = 1; n <= 2; ++n) {
      const auto means = net.events(n, PeerEvent::Kind::mean);
      ASSERT_EQ(means.size(), 2u) << "peer " << int(n);
      EXPECT_TRUE(handed[n].expired()) << "Δ is let go once encoded";
      EXPECT_FALSE(means[0].mean->fp32()) << "the mean is kept encoded";
      EXPECT_EQ(means[1].attempt, means[0].attempt + 1);
      EXPECT_EQ(means[1].members.size(), 2u);
      const auto commits = net.events(n, PeerEvent::Kind::committed);
      ASSERT_EQ(commits.size(), 1u) << "peer " << int(n);
      EXPECT_TRUE(commits[0].mine);
      EXPECT_EQ(commits[0].attempt, means[1].attempt);
      for (const PeerEvent& e : net.events(n, PeerEvent::Kind::collective_started))
        groups[e.attempt] = e.members;
    }
    const auto mean_of = [&](std::uint8_t n, std::size_t i) {
      return net.events(n, PeerEvent::Kind::mean).at(i).mean->values();
    };
    EXPECT_EQ(mean_of(1, 0), mean_of(3, 0)) << "attempt 1: the same bits everywhere";
    EXPECT_EQ(mean_of(1, 0), mean_of(2, 0));
    EXPECT_EQ(mean_of(1, 1), mean_of(2, 1)) << "attempt 2: the same bits everywhere";
    for (std::size_t i = 0; i < kDim; ++i)
      ASSERT_NEAR(mean_of(1, 1)[i], (deltas[0][i] + deltas[1][i]) / 2, 0.05) << "value " << i;
    EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(2).state.theta);

    // Every chunk a member sent, in either attempt, is the unit of its update encoded once with
    // the first attempt's seed (round 1, attempt 1), at the place the attempt's segments give it.
    ASSERT_EQ(groups.size(), 2u);
    const std::uint32_t first = groups.begin()->first;
    std::map<std::uint32_t, std::size_t> per_attempt;
    for (const Contribution& c : sent) {
      const std::uint8_t n = *net.find(c.from);
      const EncodedUpdate mine(*codec, deltas[n - 1], kChunk, 1 * 1000 + first, c.from);
      const std::vector<PeerKey>& members = groups.at(c.attempt);
      const auto owner = static_cast<std::size_t>(std::find(members.begin(), members.end(), c.to) -
                                                  members.begin());
      const std::size_t unit =
          segment_begin(kDim, members.size(), owner, kChunk) / kChunk + c.chunk;
      const std::span<const std::byte> expected = mine.unit(unit);
      EXPECT_TRUE(std::equal(c.payload.begin(), c.payload.end(), expected.begin(), expected.end()))
          << "peer " << int(n) << " attempt " << c.attempt << " unit " << unit;
      ++per_attempt[c.attempt];
    }
    EXPECT_GT(per_attempt[first], 0u);
    EXPECT_GT(per_attempt[first + 1], 0u) << "the retry sent its contributions again";
  }
}

// Peer 3 hears of its groups late: the others' chunks of the first attempt and, after a member
// died, of the retry come first. It keeps both, starts the stale attempt when its message comes,
// then the retry with the chunks kept for it, and commits with the others.
TEST(PeerCore, ChunksOfALaterAttemptWaitWhileAnEarlierOneIsStillAhead) {
  Net net;
  for (std::uint8_t n = 1; n <= 4; ++n) net.add(n);
  net.peers.at(3).hold_groups = true;
  net.die_on_first_message(4);
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  net.ready(3, 6.0f);
  net.ready(4, 9.0f);
  ASSERT_FALSE(net.peers.at(4).up);
  net.on_wire = {};
  net.kill(4);
  net.run_for(10s);  // the accusation grace: the tracker sees 4 gone and retries without it
  ASSERT_EQ(net.peers.at(3).held.size(), 2u) << "the groups of both attempts, held";
  EXPECT_EQ(net.peers.at(3).held[1].group.attempt, net.peers.at(3).held[0].group.attempt + 1);
  EXPECT_TRUE(net.events(1, PeerEvent::Kind::committed).empty());
  net.release_groups(3);
  for (std::uint8_t n = 1; n <= 3; ++n) {
    const auto commits = net.events(n, PeerEvent::Kind::committed);
    ASSERT_EQ(commits.size(), 1u) << "peer " << int(n);
    EXPECT_TRUE(commits[0].mine) << "peer " << int(n);
  }
  EXPECT_FLOAT_EQ(net.peers.at(3).state.theta[0], 0.5f + 2.0f);  // 1, 2, 6 less one each side
  EXPECT_EQ(net.peers.at(1).state.theta, net.peers.at(3).state.theta);
}

// A newcomer far behind fetches the committed state; a resync repeated while it fetches (the
// tracker answers every ready and report with one) starts no second fetch, which would take the
// first fetch's answers for its own and blame honest donors.
TEST(PeerCore, ANewcomerFetchesTheRunsStateOnceThoughTheResyncIsRepeated) {
  Net net;
  for (std::uint8_t n = 1; n <= 2; ++n) net.add(n);
  net.ready(1, 1.0f);
  net.ready(2, 3.0f);
  ASSERT_EQ(net.peers.at(1).state.round, 1u);
  Net::Peer& newcomer = net.add(3);
  ASSERT_EQ(net.events(3, PeerEvent::Kind::must_fetch).size(), 1u);
  // The tracker says it again before the fetch is done.
  Resync again;
  again.round = 1;
  again.state_hash = net.peers.at(1).state.manifest().state_hash();
  for (std::uint8_t n = 1; n <= 2; ++n)
    again.donors.push_back(Donor{.key = net.peers.at(n).key.public_key(), .address = ""});
  ClientEvent repeated{.kind = ClientEvent::Kind::resync};
  repeated.resync = again;
  newcomer.core->on_client_event(net.now, repeated);
  net.pump();
  EXPECT_EQ(net.events(3, PeerEvent::Kind::must_fetch).size(), 1u);
  ASSERT_EQ(net.events(3, PeerEvent::Kind::fetched).size(), 1u);
  EXPECT_EQ(newcomer.state.theta, net.peers.at(1).state.theta);
  EXPECT_EQ(net.peers.at(1).received[MessageType::state_request] +
                net.peers.at(2).received[MessageType::state_request],
            2);  // one manifest request per donor, once
}

// A resync to a newer round while a fetch runs (the run committed one meanwhile: where rounds are
// shorter than a download, DeMo's, one comes with every commit) does not start the fetch over,
// which never ended one (issue 49): the running fetch ends, and the state it brings is reported,
// which the tracker answers with the newest round.
TEST(PeerCore, AResyncToANewerRoundLetsTheRunningFetchEnd) {
  Net net;
  for (std::uint8_t n = 1; n <= 2; ++n) net.add(n);
  net.ready(1, 1.0f);
  net.ready(2, 3.0f);
  std::vector<Net::Wire> chunks;  // on the way while the resync comes
  net.on_wire = [&](const Net::Wire& w) {
    if (w.type != MessageType::state_chunk) return true;
    chunks.push_back(w);
    return false;
  };
  Net::Peer& newcomer = net.add(3);
  ASSERT_EQ(net.events(3, PeerEvent::Kind::must_fetch).size(), 1u);
  ASSERT_FALSE(chunks.empty());
  ClientEvent newer{.kind = ClientEvent::Kind::resync};
  newer.resync = Resync{.round = 2, .state_hash = testing::digest_of(2), .donors = {}};
  for (std::uint8_t n = 1; n <= 2; ++n)
    newer.resync.donors.push_back(Donor{.key = net.peers.at(n).key.public_key(), .address = ""});
  newcomer.core->on_client_event(net.now, newer);
  net.on_wire = nullptr;
  net.wire.insert(net.wire.end(), chunks.begin(), chunks.end());
  net.pump();
  EXPECT_EQ(net.events(3, PeerEvent::Kind::must_fetch).size(), 1u) << "no second fetch";
  const auto fetched = net.events(3, PeerEvent::Kind::fetched);
  ASSERT_EQ(fetched.size(), 1u);
  EXPECT_EQ(fetched[0].round, 1u);
  EXPECT_EQ(newcomer.state.theta, net.peers.at(1).state.theta);
}

// Every donor gone: the fetch fails, and the peer asks the tracker for new donors after 250 ms
// (doubling after each failure, up to 8 s), not at once in a loop.
TEST(PeerCore, AFetchWhoseDonorsAreAllGoneAsksTheTrackerAgainAfterABackoff) {
  Net net;
  for (std::uint8_t n = 1; n <= 2; ++n) net.add(n);
  net.ready(1, 1.0f);
  net.ready(2, 3.0f);
  // Donors that answer nothing: the newcomer's requests are lost.
  net.on_wire = [&](const Net::Wire& w) { return w.type != MessageType::state_request; };
  Net::Peer& newcomer = net.add(3);
  ASSERT_EQ(net.events(3, PeerEvent::Kind::must_fetch).size(), 1u);
  const TimePoint started = net.now;
  net.kill(1);
  net.kill(2);
  const auto warnings = [&] {
    int n = 0;
    for (const PeerEvent& e : net.events(3, PeerEvent::Kind::note)) n += e.warning;
    return n;
  };
  ASSERT_EQ(warnings(), 1);
  EXPECT_EQ(newcomer.core->poll_timeout(), started + 250ms);
  EXPECT_TRUE(net.events(3, PeerEvent::Kind::fetched).empty());
}

// The run went back to the state this peer serves while it waited for a fetch of a newer one no
// one held: it takes its own.
TEST(PeerCore, AResyncToTheStateThisPeerServesHandsItBackWithoutAFetch) {
  Net net;
  net.add(1);
  Net::Peer& p = net.peers.at(1);
  const Digest own = p.state.manifest().state_hash();
  ClientEvent elsewhere{.kind = ClientEvent::Kind::resync};
  elsewhere.resync = Resync{.round = 5, .state_hash = testing::digest_of(5), .donors = {}};
  p.core->on_client_event(net.now, elsewhere);
  ClientEvent back{.kind = ClientEvent::Kind::resync};
  back.resync = Resync{.round = 0, .state_hash = own, .donors = {}};
  p.core->on_client_event(net.now, back);
  net.pump();
  const auto fetched = net.events(1, PeerEvent::Kind::fetched);
  ASSERT_EQ(fetched.size(), 1u);
  EXPECT_EQ(fetched[0].hash, own);
  EXPECT_EQ(fetched[0].state, nullptr);  // its own: nothing to load
  // Told again with nothing pending: only a report to the tracker, nothing for the application.
  p.core->on_client_event(net.now, back);
  net.pump();
  EXPECT_EQ(net.events(1, PeerEvent::Kind::kept).size(), 1u);
}

// The tracker's word that the run ended reaches the application with the final state's hash (the
// tracker of this test keeps no custody copy, so it says so at the commit).
TEST(PeerCore, AtTheRunsFinalRoundEveryMemberIsToldTheRunEnded) {
  Net net;
  net.config.final_round = 1;
  net.tracker = std::make_unique<TrackerCore>(net.config, net.tracker_key, std::nullopt, net.now);
  for (std::uint8_t n = 1; n <= 2; ++n) net.add(n);
  net.ready(1, 1.0f);
  net.ready(2, 2.0f);
  for (std::uint8_t n = 1; n <= 2; ++n) {
    const auto ended = net.events(n, PeerEvent::Kind::run_ended);
    ASSERT_EQ(ended.size(), 1u) << "peer " << int(n);
    EXPECT_EQ(ended[0].round, 1u);
    EXPECT_EQ(ended[0].hash, net.events(n, PeerEvent::Kind::committed).at(0).hash);
    EXPECT_FALSE(ended[0].kept);
  }
}

// The tracker commits round 2 and its commit never reaches the members (a replica leader killed
// between etcd's write and the announcement; its successor loads round 2). Each member kept round
// 2's state as its tentative one across the lost link and says so when it joins the new tracker:
// it is told to commit it and installs it; it does not say ready for round 2 again (the run is
// past it), fetches nothing, and no round is lost.
TEST(PeerCore, AMemberThatMissedACommitInstallsItsTentativeStateWhenItJoinsAgain) {
  Net net;
  for (std::uint8_t n = 1; n <= 3; ++n) net.add(n);
  for (std::uint8_t n = 1; n <= 3; ++n) net.ready(n, 1.0f);
  net.from_tracker = [](const Transmit& t) { return t.type != MessageType::commit; };
  for (std::uint8_t n = 1; n <= 3; ++n) net.ready(n, 2.0f);
  const TrackerSnapshot saved = net.tracker->snapshot();
  ASSERT_EQ(saved.committed_round, 2u);
  for (std::uint8_t n = 1; n <= 3; ++n) {
    ASSERT_EQ(net.peers.at(n).state.round, 1u);
    ASSERT_TRUE(net.peers.at(n).tentative);
    EXPECT_EQ(net.peers.at(n).tentative->manifest().state_hash(), saved.committed_hash);
  }
  net.from_tracker = {};
  net.tracker = std::make_unique<TrackerCore>(net.config, net.tracker_key,
                                              decode_snapshot(encode(saved), "state"), net.now);
  for (auto& [n, p] : net.peers) p.core->client().on_disconnect(net.now);
  for (auto& [n, p] : net.peers) {
    p.core->client().on_connected(net.now);
    net.pump();
  }
  for (std::uint8_t n = 1; n <= 3; ++n) {
    const auto commits = net.events(n, PeerEvent::Kind::committed);
    ASSERT_EQ(commits.size(), 2u) << "peer " << int(n);
    EXPECT_EQ(commits[1].round, 2u);
    EXPECT_TRUE(commits[1].mine);
    EXPECT_EQ(net.peers.at(n).state.round, 2u);
    EXPECT_EQ(net.peers.at(n).state.manifest().state_hash(), saved.committed_hash);
    EXPECT_TRUE(net.events(n, PeerEvent::Kind::must_fetch).empty()) << "peer " << int(n);
  }
  net.run_for(30s);
  EXPECT_EQ(net.tracker->snapshot().committed_round, 2u);
  EXPECT_TRUE(net.tracker->snapshot().lost_rounds.empty());
  for (std::uint8_t n = 1; n <= 3; ++n) net.ready(n, 3.0f);
  EXPECT_EQ(net.tracker->snapshot().committed_round, 3u) << "the run goes on from round 2";
}

}  // namespace
}  // namespace loco::proto
