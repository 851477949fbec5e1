// A signed chunk out of bounds, shown to the group (unit_evidence.hpp): what it shows, what it
// does not (another signer's bytes, another attempt, an honest chunk), and its decoder's checks.

#include "loco/proto/unit_evidence.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "all_reduce_harness.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

using namespace testing;

constexpr std::size_t kValues = 1000, kUnit = 100;  // 10 units; with 4 members, segments of 2–3

struct EvidenceSetup {
  std::unique_ptr<compress::Codec> codec = compress::make_codec("fp32");
  std::vector<PeerKey> members = ring_of(4);

  EvidenceContext context() const {
    return EvidenceContext{.run_id = kHarnessRun,
                           .round = 7,
                           .attempt = 2,
                           .members = members,
                           .values = kValues,
                           .unit_values = kUnit,
                           .codec = codec.get(),
                           .median_norm = 1.0f,
                           .norm_limit = 4.0f};
  }

  // Unit `unit` of member `signer` (key(signer + 1)) holding `value` in every place, signed.
  Evidence signed_unit(std::size_t signer, std::uint32_t unit, float value,
                       StatementKind kind = StatementKind::update_unit) const {
    return signed_bytes(signer, unit, codec->encode(std::vector<float>(kUnit, value), {}), kind);
  }
  Evidence signed_bytes(std::size_t signer, std::uint32_t unit, std::vector<std::byte> bytes,
                        StatementKind kind = StatementKind::update_unit) const {
    Evidence e{.round = 7,
               .attempt = 2,
               .accused = members[signer],
               .kind = kind,
               .unit = unit,
               .signature = {},
               .bytes = std::move(bytes)};
    e.signature = sign_unit(key(static_cast<std::uint8_t>(signer + 1)), kHarnessRun, 7,
                            kind == StatementKind::mean_unit ? 2 : 0, kind, unit, e.bytes);
    return e;
  }
};

TEST(UnitEvidence, AnOversizedSignedUnitShowsItsSigner) {
  const EvidenceSetup s;
  // Norm 10·100 = 1000 against a bound of 1.1 · 4 · 1.
  const auto shows = what_evidence_shows(s.signed_unit(1, 3, 100.0f), s.context());
  ASSERT_TRUE(shows.has_value());
  EXPECT_NE(shows->find("signed unit 3 of round 7"), std::string::npos) << *shows;
  EXPECT_NE(shows->find("honest update(s) reach at most"), std::string::npos) << *shows;
}

TEST(UnitEvidence, AnHonestUnitShowsNothing) {
  const EvidenceSetup s;
  EXPECT_FALSE(what_evidence_shows(s.signed_unit(1, 3, 0.1f), s.context()));  // norm 1
}

TEST(UnitEvidence, BytesItsAccusedDidNotSignShowNothing) {
  const EvidenceSetup s;
  Evidence tampered = s.signed_unit(1, 3, 0.1f);
  const Evidence poisoned = s.signed_unit(1, 3, 100.0f);
  tampered.bytes = poisoned.bytes;  // a liar's bytes under an honest signature
  EXPECT_FALSE(what_evidence_shows(tampered, s.context()));
  Evidence other = s.signed_unit(2, 3, 100.0f);  // member 2 signed it, member 1 is accused
  other.accused = s.members[1];
  EXPECT_FALSE(what_evidence_shows(other, s.context()));
  Evidence moved = poisoned;  // a signature over unit 3, shown as unit 4
  moved.unit = 4;
  EXPECT_FALSE(what_evidence_shows(moved, s.context()));
}

TEST(UnitEvidence, EvidenceOfAnotherRoundAttemptOrGroupShowsNothing) {
  const EvidenceSetup s;
  EvidenceContext later = s.context();
  later.round = 8;
  EXPECT_FALSE(what_evidence_shows(s.signed_unit(1, 3, 100.0f), later));
  EvidenceContext other_attempt = s.context();
  other_attempt.attempt = 3;
  EXPECT_FALSE(what_evidence_shows(s.signed_unit(1, 3, 100.0f), other_attempt));
  const std::vector<PeerKey> others = {s.members[0], s.members[2], s.members[3]};
  EvidenceContext without = s.context();
  without.members = others;
  EXPECT_FALSE(what_evidence_shows(s.signed_unit(1, 3, 100.0f), without)) << "not a member";
  EXPECT_FALSE(what_evidence_shows(s.signed_unit(1, 10, 100.0f), s.context())) << "no unit 10";
}

TEST(UnitEvidence, AnUpdateUnitStandsForEveryAttemptOfItsRound) {
  // A retry sends the same bytes (encoded_update.hpp): the signature names no attempt.
  const EvidenceSetup s;
  Evidence e = s.signed_unit(1, 3, 100.0f);
  e.attempt = 5;
  EvidenceContext fifth = s.context();
  fifth.attempt = 5;
  EXPECT_TRUE(what_evidence_shows(e, fifth));
}

TEST(UnitEvidence, AMeanUnitShowsOnlyTheOwnerOfItsSegment) {
  const EvidenceSetup s;
  // 10 units among 4 members: segments start at units 0, 2, 5, 7; unit 3 is member 1's.
  EXPECT_TRUE(
      what_evidence_shows(s.signed_unit(1, 3, 100.0f, StatementKind::mean_unit), s.context()));
  EXPECT_FALSE(
      what_evidence_shows(s.signed_unit(2, 3, 100.0f, StatementKind::mean_unit), s.context()))
      << "member 2 owns no mean of unit 3";
  EXPECT_TRUE(
      what_evidence_shows(s.signed_unit(3, 9, 100.0f, StatementKind::mean_unit), s.context()));
}

TEST(UnitEvidence, NonFiniteOrUndecodableSignedBytesShowTheirSigner) {
  const EvidenceSetup s;
  // The fp32 codec's encoder refuses a NaN, and so does its decoder: write one into its bytes
  // (the last value).
  std::vector<std::byte> bytes = s.codec->encode(std::vector<float>(kUnit, 0.1f), {});
  const auto nan = std::bit_cast<std::array<std::byte, 4>>(std::numeric_limits<float>::quiet_NaN());
  std::copy(nan.begin(), nan.end(), bytes.end() - 4);
  const auto shows = what_evidence_shows(s.signed_bytes(1, 3, bytes), s.context());
  ASSERT_TRUE(shows.has_value());
  EXPECT_NE(shows->find("NaN or infinite"), std::string::npos) << *shows;
  bytes.resize(7);
  const auto undecodable = what_evidence_shows(s.signed_bytes(1, 3, bytes), s.context());
  ASSERT_TRUE(undecodable.has_value());
  EXPECT_NE(undecodable->find("does not decode"), std::string::npos) << *undecodable;
}

TEST(UnitEvidence, TheMessageRoundTripsAndItsDecoderRefusesMalformedOnes) {
  const EvidenceSetup s;
  const Evidence e = s.signed_unit(1, 3, 100.0f);
  const std::vector<std::byte> body = encode(e);
  const Evidence back = decode_evidence(body);
  EXPECT_EQ(back.round, e.round);
  EXPECT_EQ(back.attempt, e.attempt);
  EXPECT_EQ(back.accused, e.accused);
  EXPECT_EQ(back.kind, e.kind);
  EXPECT_EQ(back.unit, e.unit);
  EXPECT_EQ(back.signature, e.signature);
  EXPECT_EQ(back.bytes, e.bytes);
  for (std::size_t cut = 0; cut < 1 + 8 + 4 + 32 + 1 + 4 + 64; ++cut)
    EXPECT_THROW(decode_evidence(std::span(body).first(cut)), Error) << "cut at " << cut;
  std::vector<std::byte> contribution = body;
  contribution[1 + 8 + 4 + 32] = std::byte{0};  // StatementKind::contribution: not a unit's
  EXPECT_THROW(decode_evidence(contribution), Error);
  std::vector<std::byte> huge(info(MessageType::evidence).max_bytes + 1);
  huge[0] = std::byte{1};
  EXPECT_THROW(decode_evidence(huge), Error);
}

TEST(UnitEvidence, AnOwnerRefusingASignedChunkHoldsEvidenceThatShowsIt) {
  AllReduceHarness direct(kDirect, 4, 4000, "int8:block=64", 500, 5, std::sqrt(4000.0f));
  for (float& v : direct.values[2]) v *= 1000;
  direct.run(5);
  const auto& failure = direct.nodes[0]->failure();
  ASSERT_TRUE(failure.has_value());
  ASSERT_TRUE(failure->evidence.has_value());
  EXPECT_EQ(failure->evidence->accused, direct.members[2]);
  const AllReduceConfig config{.round = 7,
                               .attempt = 1,
                               .members = direct.members,
                               .self = 1,
                               .chunk_values = 500,
                               .codec = direct.codec.get(),
                               .seed = 5,
                               .median_norm = std::sqrt(4000.0f),
                               .norm_limit = 10.0f,
                               .run_id = std::string(kHarnessRun)};
  EXPECT_TRUE(what_evidence_shows(*failure->evidence, evidence_context(config, 4000)))
      << "another member checks it alone";
}

}  // namespace
}  // namespace loco::proto
