// Every tracker message round-trips, and every malformed body is refused with Error(format)
// before anything is allocated from its counts.

#include "loco/proto/tracker_messages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::digest_of;
using testing::key;

template <typename M>
void expect_refused_when_damaged(const std::vector<std::byte>& body) {
  for (std::size_t n = 0; n < body.size(); ++n)
    EXPECT_THROW(decode<M>(std::span(body).first(n)), Error) << "truncated to " << n;
  auto trailing = body;
  trailing.push_back(std::byte{0});
  EXPECT_THROW(decode<M>(trailing), Error) << "trailing byte";
  auto version = body;
  version[0] = std::byte{99};
  try {
    decode<M>(version);
    ADD_FAILURE() << "version 99 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different loco releases"), std::string::npos);
  }
}

TEST(TrackerMessages, JoinRequestRoundTripsAndRefusesDamage) {
  JoinRequest m{.software = "loco 0.1.0",
                .listen_address = "10.0.0.1:7701",
                .upload_bps = 123,
                .credential = "token",
                .settings = testing::run_settings(),
                .genesis = digest_of(1),
                .state_round = 5,
                .state_hash = digest_of(2),
                .relay_pairs = 0,
                .tentative_round = 6,
                .tentative_hash = digest_of(3)};
  const auto body = encode(m);
  const JoinRequest back = decode<JoinRequest>(body);
  EXPECT_EQ(back.listen_address, m.listen_address);
  EXPECT_EQ(back.settings, m.settings);
  EXPECT_EQ(back.state_hash, m.state_hash);
  EXPECT_EQ(back.tentative_round, 6u);
  EXPECT_EQ(back.tentative_hash, m.tentative_hash);
  EXPECT_EQ(back.credential, "token");
  expect_refused_when_damaged<JoinRequest>(body);
}

TEST(TrackerMessages, AGroupCarriesItsTrimAndOneThatTrimsEveryoneIsRefused) {
  Group g{.round = 3, .attempt = 1, .epoch = 2, .members = {}, .trim = 1};
  for (std::uint8_t n = 1; n <= 3; ++n) g.members.push_back(key(n).public_key());
  EXPECT_EQ(decode<Group>(encode(g)).trim, 1u);
  g.trim = 2;  // of 3: nothing would be left
  const auto body = encode(g);
  EXPECT_THROW(decode<Group>(body), Error);
  // The trim count a tracker gives a group: ceil(trim x n), at most (n - 1) / 2.
  EXPECT_EQ(trim_count(0.125f, 8), 1u);
  EXPECT_EQ(trim_count(0.125f, 9), 2u);
  EXPECT_EQ(trim_count(0.25f, 8), 2u);
  EXPECT_EQ(trim_count(0.125f, 3), 1u);
  EXPECT_EQ(trim_count(0.125f, 2), 0u) << "two members: nothing to trim";
  EXPECT_EQ(trim_count(0.4f, 4), 1u) << "at most (n - 1) / 2";
  EXPECT_EQ(trim_count(0.0f, 100), 0u);
}

TEST(TrackerMessages, AWeightedGroupCarriesATokenCountPerMemberAndNothingElse) {
  Group g{.round = 3, .attempt = 1, .epoch = 2, .members = {}};
  for (std::uint8_t n = 1; n <= 3; ++n) g.members.push_back(key(n).public_key());
  g.tokens = {4096, 1024, 8192};
  const auto body = encode(g);
  EXPECT_EQ(decode<Group>(body).tokens, g.tokens);
  expect_refused_when_damaged<Group>(body);
  EXPECT_TRUE(
      decode<Group>(encode(Group{.round = 1, .attempt = 1, .epoch = 1, .members = g.members}))
          .tokens.empty())
      << "no tokens: the plain mean";
  // The tokens come before the phase, the relay routes and the checked-owners flag, the body's
  // last fields: a count, then u64 each. Refused: a count other than 0 or the members', a count of
  // 0 tokens, one above the bound.
  const auto with_tokens = [&](std::uint32_t count, std::vector<std::uint64_t> values) {
    std::vector<std::byte> b =
        encode(Group{.round = 3, .attempt = 1, .epoch = 2, .members = g.members});
    b.resize(b.size() - 13);  // no tokens, no phase, no relays, not checked
    ByteWriter w;
    w.u32(count);
    for (const std::uint64_t v : values) w.u64(v);
    w.u32(0);
    w.u32(0);
    w.boolean(false);
    const auto tail = w.finish();
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  EXPECT_NO_THROW(decode<Group>(with_tokens(3, {1, 2, 3})));
  EXPECT_THROW(decode<Group>(with_tokens(2, {1, 2})), Error) << "two of three members weighed";
  EXPECT_THROW(decode<Group>(with_tokens(3, {1, 0, 3})), Error) << "a member of no tokens";
  EXPECT_THROW(decode<Group>(with_tokens(3, {1, kMaxRoundTokens + 1, 3})), Error);
  EXPECT_THROW(decode<Group>(with_tokens(0xffffffff, {})), Error) << "counted before allocating";
  const Ready ready{.round = 5, .update_norm = 0.5f, .base_hash = digest_of(4), .tokens = 1u << 20};
  EXPECT_EQ(decode<Ready>(encode(ready)).tokens, 1u << 20);
}

// Rounds paced by the tracker: a ready carries the member's step time, a finite number of seconds
// in [0, kMaxStepSeconds]; a group the phase, at most kMaxPhaseMs. Anything else is malformed.
TEST(TrackerMessages, AReadysStepTimeAndAGroupsPhaseAreRefusedOutsideTheirBounds) {
  const Ready ready{
      .round = 5, .update_norm = 0.5f, .base_hash = digest_of(4), .step_seconds = 0.25f};
  const auto body = encode(ready);
  EXPECT_EQ(decode<Ready>(body).step_seconds, 0.25f);
  expect_refused_when_damaged<Ready>(body);
  // The step time is the body's last field: overwrite its four bytes.
  const auto with_step = [&](float seconds) {
    std::vector<std::byte> b = body;
    b.resize(b.size() - 4);
    ByteWriter w;
    w.f32(seconds);
    const auto tail = w.finish();
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  EXPECT_EQ(decode<Ready>(with_step(0)).step_seconds, 0.0f) << "0: not measured";
  EXPECT_EQ(decode<Ready>(with_step(kMaxStepSeconds)).step_seconds, kMaxStepSeconds);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -0.5f, -1e-30f,
                          std::numeric_limits<float>::infinity(), kMaxStepSeconds * 1.001f, 1e30f,
                          -std::numeric_limits<float>::infinity()})
    EXPECT_THROW(decode<Ready>(with_step(bad)), Error) << bad;

  Group g{.round = 3, .attempt = 1, .epoch = 2, .members = {key(1).public_key()}};
  g.phase_ms = 2500;
  const auto group = encode(g);
  EXPECT_EQ(decode<Group>(group).phase_ms, 2500u);
  expect_refused_when_damaged<Group>(group);
  // The phase follows the (empty) tokens, before the (empty) relays and the flag: 9 bytes from the
  // end.
  const auto with_phase = [&](std::uint32_t ms) {
    std::vector<std::byte> b = group;
    ByteWriter w;
    w.u32(ms);
    const auto bytes = w.finish();
    std::copy(bytes.begin(), bytes.end(), b.end() - 9);
    return b;
  };
  EXPECT_EQ(decode<Group>(with_phase(kMaxPhaseMs)).phase_ms, kMaxPhaseMs);
  EXPECT_THROW(decode<Group>(with_phase(kMaxPhaseMs + 1)), Error);
  EXPECT_THROW(decode<Group>(with_phase(0xffffffff)), Error);

  // A resync carries the phase too, as its last field.
  const auto resync =
      encode(Resync{.round = 4, .state_hash = digest_of(2), .donors = {}, .phase_ms = 1500});
  EXPECT_EQ(decode<Resync>(resync).phase_ms, 1500u);
  expect_refused_when_damaged<Resync>(resync);
  for (const std::uint32_t bad : {kMaxPhaseMs + 1, 0xffffffffu}) {
    std::vector<std::byte> b = resync;
    ByteWriter w;
    w.u32(bad);
    const auto bytes = w.finish();
    std::copy(bytes.begin(), bytes.end(), b.end() - 4);
    EXPECT_THROW(decode<Resync>(b), Error) << bad;
  }
}

TEST(TrackerMessages, EveryMessageRoundTrips) {
  const auto g =
      decode<Group>(encode(Group{.round = 3,
                                 .attempt = 2,
                                 .epoch = 9,
                                 .members = {key(1).public_key(), key(2).public_key()}}));
  EXPECT_EQ(g.members.size(), 2u);
  EXPECT_EQ(g.members[1], key(2).public_key());
  const auto f = decode<RoundFailed>(encode(
      RoundFailed{.round = 1, .attempt = 1, .reason = "nan", .suspect = key(3).public_key()}));
  EXPECT_EQ(f.suspect, key(3).public_key());
  const Ready ready{.round = 5, .update_norm = 0.5f, .base_hash = digest_of(4), .loss = 2.25f};
  EXPECT_EQ(decode<Ready>(encode(ready)).loss, 2.25f);
  EXPECT_EQ(decode<Ready>(encode(ready)).base_hash, digest_of(4));
  expect_refused_when_damaged<Ready>(encode(ready));
  const auto r = decode<Resync>(encode(
      Resync{.round = 4, .state_hash = digest_of(4), .donors = {{key(1).public_key(), "a:1"}}}));
  EXPECT_EQ(r.donors[0].address, "a:1");
  const auto h = decode<Heartbeat>(encode(Heartbeat{.state_round = 1,
                                                    .inner_step = 2,
                                                    .loss = 3.5f,
                                                    .tokens_per_s = 4,
                                                    .bytes_sent = 5,
                                                    .bytes_received = 6,
                                                    .network_wait_s = 7,
                                                    .bytes_relayed = 8,
                                                    .sketch = {}}));
  EXPECT_EQ(h.loss, 3.5f);
  EXPECT_EQ(h.bytes_received, 6u);
  EXPECT_EQ(h.bytes_relayed, 8u);
  EXPECT_FALSE(h.sketch);
  ParameterSketch sketch{};
  sketch[31] = -2.5f;
  Heartbeat sketched;
  sketched.sketch = sketch;
  const auto with_sketch = encode(sketched);
  EXPECT_EQ(decode<Heartbeat>(with_sketch).sketch, sketch);
  expect_refused_when_damaged<Heartbeat>(with_sketch);
  std::vector<std::byte> bad_flag = encode(Heartbeat{});
  bad_flag.back() = std::byte{2};  // the sketch flag
  EXPECT_THROW(decode<Heartbeat>(bad_flag), Error);
  const auto reply = decode<JoinReply>(encode(JoinReply{.accepted = true,
                                                        .refusal = {},
                                                        .shard_index = 3,
                                                        .shard_count = 8,
                                                        .heartbeat_ms = 2000,
                                                        .eviction_ms = 10000,
                                                        .committed_round = 7,
                                                        .committed_hash = digest_of(7),
                                                        .final_round = 60,
                                                        .phase_ms = 2500}));
  EXPECT_EQ(reply.shard_index, 3u);
  EXPECT_EQ(reply.final_round, 60u);
  EXPECT_EQ(reply.phase_ms, 2500u);
  expect_refused_when_damaged<JoinReply>(encode(reply));
  // The phase is its last field, bounded as Group's.
  std::vector<std::byte> long_phase = encode(reply);
  ByteWriter over;
  over.u32(kMaxPhaseMs + 1);
  const auto over_bytes = over.finish();
  std::copy(over_bytes.begin(), over_bytes.end(), long_phase.end() - 4);
  EXPECT_THROW(decode<JoinReply>(long_phase), Error);
  expect_refused_when_damaged<Group>(
      encode(Group{.round = 1, .attempt = 1, .epoch = 1, .members = {key(1).public_key()}}));
  expect_refused_when_damaged<Resync>(encode(
      Resync{.round = 4, .state_hash = digest_of(4), .donors = {{key(1).public_key(), "a:1"}}}));
}

TEST(TrackerMessages, AGroupSaysWhetherOwnersAreCheckedAndAProofRoundTrips) {
  Group g{.round = 3, .attempt = 1, .epoch = 2, .members = {key(1).public_key()}};
  g.check_owners = true;
  EXPECT_TRUE(decode<Group>(encode(g)).check_owners);
  std::vector<std::byte> bad_flag = encode(g);
  bad_flag.back() = std::byte{2};
  EXPECT_THROW(decode<Group>(bad_flag), Error);
  const ProvenMisconduct proof{
      .proof = {
          .first = sign_statement(key(1), "run", 3, 1, StatementKind::result, 0, Digest{1}),
          .second = sign_statement(key(2), "run", 3, 1, StatementKind::result, 0, Digest{2})}};
  const auto body = encode(proof);
  const ProvenMisconduct back = decode<ProvenMisconduct>(body);
  EXPECT_EQ(back.proof.second.signer, key(2).public_key());
  EXPECT_EQ(back.proof.first.signature, proof.proof.first.signature);
  EXPECT_FALSE(
      proven_at_fault("run", back.proof, std::vector{key(1).public_key(), key(2).public_key()})
          .empty())
      << "still a proof after the wire";
  expect_refused_when_damaged<ProvenMisconduct>(body);
}

TEST(TrackerMessages, RunEndedRoundTripsAndRefusesDamage) {
  const RunEnded m{.round = 60, .state_hash = digest_of(6), .kept = true};
  const auto body = encode(m);
  const RunEnded back = decode<RunEnded>(body);
  EXPECT_EQ(back.round, 60u);
  EXPECT_EQ(back.state_hash, digest_of(6));
  EXPECT_TRUE(back.kept);
  expect_refused_when_damaged<RunEnded>(body);
  auto bad_flag = body;
  bad_flag.back() = std::byte{2};  // `kept` is 0 or 1
  EXPECT_THROW(decode<RunEnded>(bad_flag), Error);
}

TEST(TrackerMessages, CountsAreCheckedBeforeAllocating) {
  // A group that claims 4 billion members in a 20-byte body.
  ByteWriter w;
  w.u8(1);
  w.u64(1);
  w.u32(1);
  w.u64(1);
  w.u32(0xffffffff);
  const auto body = w.finish();
  try {
    decode<Group>(body);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format);
    EXPECT_NE(std::string(e.what()).find("round group is malformed"), std::string::npos);
  }
  const JoinReply bad_shard{.accepted = true,
                            .refusal = {},
                            .shard_index = 8,
                            .shard_count = 8,
                            .heartbeat_ms = 1,
                            .eviction_ms = 1};
  EXPECT_THROW(decode<JoinReply>(encode(bad_shard)), Error);
}

TEST(TrackerMessages, ASignedViewOpensOnlyUnderThePinnedKeyAndRun) {
  const auto tracker = key(50);
  const View v{.epoch = 7,
               .members = {Member{.key = key(1).public_key(),
                                  .address = "h:1",
                                  .shard = 2,
                                  .upload_bps = 3,
                                  .first_round = 4,
                                  .reachability = Reachability::unreachable}}};
  const auto body = encode_signed_view(v, tracker, "run");
  EXPECT_EQ(open_signed_view(body, tracker.public_key(), "run"), v);
  EXPECT_THROW(open_signed_view(body, key(51).public_key(), "run"), Error);
  EXPECT_THROW(open_signed_view(body, tracker.public_key(), "other"), Error);
  for (std::size_t i = 1; i < body.size(); ++i) {
    auto altered = body;
    altered[i] ^= std::byte{1};
    EXPECT_THROW(open_signed_view(altered, tracker.public_key(), "run"), Error) << "byte " << i;
  }
}

// Members are looked up by binary search and merged with deltas: a view must list them in
// strictly increasing key order, each once.
TEST(TrackerMessages, AViewWhoseMembersAreOutOfOrderOrRepeatedIsRefused) {
  const auto tracker = key(50);
  Member low{.key = key(1).public_key(), .address = "h:1", .shard = 0, .upload_bps = 0};
  Member high{.key = key(2).public_key(), .address = "h:2", .shard = 1, .upload_bps = 0};
  if (high.key < low.key) std::swap(low, high);
  for (const std::vector<Member>& members :
       {std::vector<Member>{high, low}, std::vector<Member>{low, low}}) {
    const auto body = encode_signed_view(View{.epoch = 3, .members = members}, tracker, "run");
    EXPECT_THROW(open_signed_view(body, tracker.public_key(), "run"), Error);
  }
  const auto ordered = encode_signed_view(View{.epoch = 3, .members = {low, high}}, tracker, "run");
  EXPECT_EQ(open_signed_view(ordered, tracker.public_key(), "run").members.size(), 2u);
}

// A member's reachability is one of three values: a signed view that says anything else (the
// tracker's own bug, or a newer release's value) is refused, not read as one of them.
TEST(TrackerMessages, AMemberOfUnknownReachabilityIsRefused) {
  const auto tracker = key(50);
  Member m{.key = key(1).public_key(), .address = "h:1"};
  m.reachability = static_cast<Reachability>(3);
  const auto view = encode_signed_view(View{.epoch = 3, .members = {m}}, tracker, "run");
  EXPECT_THROW(open_signed_view(view, tracker.public_key(), "run"), Error);
  const auto delta = encode_signed_view_delta(
      ViewDelta{.base_epoch = 1, .epoch = 2, .removed = {}, .changed = {m}}, tracker, "run");
  EXPECT_THROW(open_signed_view_delta(delta, tracker.public_key(), "run"), Error);
  m.reachability = Reachability::reachable;
  const auto good = encode_signed_view(View{.epoch = 3, .members = {m}}, tracker, "run");
  EXPECT_EQ(open_signed_view(good, tracker.public_key(), "run").members.at(0).reachability,
            Reachability::reachable);
}

}  // namespace
}  // namespace loco::proto
