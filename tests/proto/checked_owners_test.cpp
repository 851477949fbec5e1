// The direct exchange with checked owners (owner_check.hpp), in memory, against members that lie
// with their own keys: an owner that returns a wrong mean, a checker that signs a wrong digest, a
// contributor that sends its owner and its checker different bytes. Each is caught, by a proof
// that names it (and, for a disagreeing pair, only it and its partner), and honest runs end with
// the same bits everywhere.

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "all_reduce_harness.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/proto/owner_check.hpp"

namespace loco::proto {
namespace {

using testing::AllReduceHarness;
using testing::kDirect;
using testing::kHarnessRun;

AllReduceHarness checked(std::size_t n, std::size_t size, std::size_t chunk, std::uint64_t seed,
                         std::size_t trim = 0, std::vector<float> weights = {}) {
  return AllReduceHarness(kDirect, n, size, "int8:block=64", chunk, seed, 0, trim,
                          std::move(weights), /*apart=*/true, /*check_owners=*/true);
}

TEST(CheckedOwners, EveryMemberEndsWithTheSameBitsCloseToTheMean) {
  std::uint64_t seed = 60;
  for (const std::size_t n : {1, 2, 3, 4, 7})
    for (const std::size_t trim : {std::size_t{0}, (n - 1) / 2})
      for (const std::size_t chunk : {5, 1 << 16}) {
        SCOPED_TRACE(::testing::Message() << n << " members, trim " << trim << ", chunk " << chunk);
        AllReduceHarness h = checked(n, 203, chunk, seed, trim);
        h.run(seed++);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(h.nodes[i]->done())
              << "member " << i << ": "
              << (h.nodes[i]->failure() ? h.nodes[i]->failure()->reason : "not done");
          EXPECT_EQ(h.values[i], h.values[0]) << "the same bits everywhere";
        }
        if (trim != 0) continue;
        for (std::size_t j = 0; j < 203; ++j) {
          double mean = 0;
          for (const auto& u : h.updates) mean += u[j];
          mean /= static_cast<double>(n);
          ASSERT_NEAR(h.values[0][j], mean, 0.15) << "value " << j << " (int8 of blocks of 64)";
        }
      }
}

TEST(CheckedOwners, SegmentsOfNoValuesAreCheckedToo) {
  for (const std::size_t size : {0, 1, 3}) {
    SCOPED_TRACE(::testing::Message() << size << " values");
    AllReduceHarness h = checked(5, size, 4, 70 + size);
    h.run(size);
    for (std::size_t i = 0; i < 5; ++i) {
      ASSERT_TRUE(h.nodes[i]->done()) << "member " << i;
      EXPECT_EQ(h.values[i], h.values[0]);
    }
  }
}

TEST(CheckedOwners, AWeightedRoundIsCheckedToo) {
  AllReduceHarness h = checked(4, 500, 64, 3, 1, {0.5f, 1.5f, 1.0f, 1.0f});
  h.run(3);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(h.nodes[i]->done()) << "member " << i;
    EXPECT_EQ(h.values[i], h.values[0]);
  }
}

// A member that rewrites what it sends, with its own key: `rewrite` gets each chunk message it
// sends (header, payload) and may change the payload; statements it signs afterwards are signed
// again over what it really sent.
struct Liar {
  std::size_t member;
  // `values`: how many values the chunk holds (0 for a statement).
  std::function<void(std::size_t to, const ChunkHeader& h, std::size_t values,
                     std::vector<std::byte>& payload)>
      rewrite;
};

// How many values chunk message `h` from `from` to `to` holds, of a vector of `total` values cut
// into segments of whole direct-exchange chunks (all_reduce.hpp: direct_chunk_values,
// segment_begin).
std::size_t values_in(const ChunkHeader& h, std::size_t from, std::size_t to, std::size_t n,
                      std::size_t total, std::size_t chunk) {
  const std::size_t segment = h.phase == 1 ? from : h.phase == 0 ? to : (to + n - 1) % n;
  chunk = direct_chunk_values(total, chunk);
  const std::size_t size =
      segment_begin(total, n, segment + 1, chunk) - segment_begin(total, n, segment, chunk);
  return std::min(chunk, size - h.chunk * chunk);
}

// Installs `liar` into the harness's links: its messages pass through `rewrite`, and its
// statements are re-signed over the digests of what it really sent to each receiver.
void lie(AllReduceHarness& h, std::size_t total, std::size_t chunk, Liar liar) {
  const std::size_t n = h.members.size();
  auto sent = std::make_shared<std::map<std::pair<std::size_t, std::size_t>, SegmentDigest>>();
  auto results = std::make_shared<std::map<std::uint32_t, std::vector<std::byte>>>();
  auto result_hash = std::make_shared<SegmentDigest>();
  auto result_digest = std::make_shared<std::optional<Digest>>();
  h.tamper = [&h, liar, n, total, chunk, sent, results, result_hash, result_digest](
                 std::size_t from, std::size_t to, std::vector<std::byte>& body) {
    if (from != liar.member) return;
    std::span<const std::byte> view;
    const ChunkHeader header = decode_chunk(body, view);
    std::vector<std::byte> payload(view.begin(), view.end());
    const std::size_t self = liar.member;
    const std::size_t values = header.phase == 3 ? 0 : values_in(header, self, to, n, total, chunk);
    if (header.phase == 1) {
      // The owner's result: one rewrite per chunk, the same bytes to everyone.
      auto it = results->find(header.chunk);
      if (it == results->end()) {
        liar.rewrite(to, header, values, payload);
        it = results->emplace(header.chunk, payload).first;
        result_hash->add_bytes(payload);
      }
      payload = it->second;
    } else if (header.phase == 0 || header.phase == 2) {
      liar.rewrite(to, header, values, payload);
      const std::size_t segment = header.phase == 0 ? to : (to + n - 1) % n;
      (*sent)[{segment, to}].add_bytes(payload);
    } else if (header.phase == 3 && header.step != 1) {
      ByteReader r(payload, "a statement");
      Statement s = read_statement(r);
      Digest digest = s.digest;
      if (s.kind == StatementKind::contribution) {
        digest = (*sent)[{s.segment, to}].finish();
      } else if (s.segment == self) {
        if (!*result_digest) *result_digest = result_hash->finish();
        digest = **result_digest;
      }
      liar.rewrite(to, header, values, payload);  // may change the digest itself (a lying checker)
      ByteReader changed(payload, "a statement");
      const Statement asked = read_statement(changed);
      if (asked.digest != s.digest) digest = asked.digest;
      s = sign_statement(h.signers[self], kHarnessRun, s.round, s.attempt, s.kind, s.segment,
                         digest);
      ByteWriter w;
      write_statement(w, s);
      payload = w.finish();
    }
    body = encode_chunk(header, payload);
  };
}

// The chunk's `count` values moved by `by`, encoded again.
void shift_values(const compress::Codec& codec, std::vector<std::byte>& payload, std::size_t count,
                  float by) {
  std::vector<float> values(count);
  codec.decode(payload, values);
  for (float& v : values) v += by;
  payload = codec.encode(values, compress::EncodeOptions{.seed = 1, .shape = {}});
}

void expect_proof_against(const AllReduceHarness& h, std::size_t member,
                          const std::set<PeerKey>& at_fault) {
  const auto& failure = h.nodes[member]->failure();
  ASSERT_TRUE(failure.has_value()) << "member " << member << " noticed nothing";
  ASSERT_TRUE(failure->proof.has_value()) << "member " << member << ": " << failure->reason;
  EXPECT_EQ(proven_at_fault(kHarnessRun, *failure->proof, h.members), at_fault) << failure->reason;
}

TEST(CheckedOwners, AnOwnerReturningAWrongMeanIsProvenWithItsChecker) {
  for (const std::size_t n : {2, 3, 5}) {
    SCOPED_TRACE(::testing::Message() << n << " members");
    AllReduceHarness h = checked(n, 300, 32, 11);
    const std::size_t owner = 1;
    lie(h, 300, 32,
        Liar{.member = owner,
             .rewrite = [&](std::size_t, const ChunkHeader& header, std::size_t values,
                            std::vector<std::byte>& payload) {
               if (header.phase == 1) shift_values(*h.codec, payload, values, 0.25f);
             }});
    h.run(11);
    const PeerKey checker = h.members[checker_of(owner, n)];
    for (std::size_t i = 0; i < n; ++i) {
      if (i == owner) continue;
      SCOPED_TRACE(::testing::Message() << "member " << i);
      EXPECT_FALSE(h.nodes[i]->done());
      expect_proof_against(h, i, {h.members[owner], checker});
    }
  }
}

TEST(CheckedOwners, ACheckerSigningAWrongDigestIsProvenWithItsOwner) {
  const std::size_t n = 4, checker = 2, owner = 1;
  AllReduceHarness h = checked(n, 300, 32, 12);
  lie(h, 300, 32,
      Liar{.member = checker,
           .rewrite = [&](std::size_t, const ChunkHeader& header, std::size_t,
                          std::vector<std::byte>& payload) {
             if (header.phase != 3 || header.step != 2) return;
             ByteReader r(payload, "a statement");
             Statement s = read_statement(r);
             if (s.segment != owner) return;
             s.digest[0] ^= 1;
             ByteWriter w;
             write_statement(w, s);
             payload = w.finish();
           }});
  h.run(12);
  for (std::size_t i = 0; i < n; ++i) {
    if (i == checker) continue;
    SCOPED_TRACE(::testing::Message() << "member " << i);
    expect_proof_against(h, i, {h.members[owner], h.members[checker]});
  }
}

TEST(CheckedOwners, AContributorSendingItsOwnerAndCheckerDifferentBytesIsProvenAlone) {
  const std::size_t n = 4, liar = 0, segment = 2;
  AllReduceHarness h = checked(n, 300, 32, 13);
  lie(h, 300, 32,
      Liar{.member = liar,
           .rewrite = [&](std::size_t to, const ChunkHeader& header, std::size_t values,
                          std::vector<std::byte>& payload) {
             if (header.phase == 2 && to == checker_of(segment, n))
               shift_values(*h.codec, payload, values, 0.5f);
           }});
  h.run(13);
  expect_proof_against(h, checker_of(segment, n), {h.members[liar]});
  for (std::size_t i = 0; i < n; ++i) {
    if (i == liar || i == checker_of(segment, n)) continue;
    const auto& failure = h.nodes[i]->failure();
    EXPECT_FALSE(failure && failure->suspect && *failure->suspect != h.members[liar])
        << "member " << i << " blamed an honest member: " << failure->reason;
  }
}

TEST(CheckedOwners, AStatementThatDoesNotMatchTheBytesSentNamesItsSender) {
  const std::size_t n = 3, liar = 2;
  AllReduceHarness h = checked(n, 300, 32, 14);
  // Sends its owners bytes other than those its statements cover (it signs the originals).
  h.tamper = [&](std::size_t from, std::size_t to, std::vector<std::byte>& body) {
    if (from != liar) return;
    std::span<const std::byte> view;
    const ChunkHeader header = decode_chunk(body, view);
    if (header.phase != 0) return;
    std::vector<std::byte> payload(view.begin(), view.end());
    shift_values(*h.codec, payload, values_in(header, liar, to, n, 300, 32), 0.5f);
    body = encode_chunk(header, payload);
  };
  h.run(14);
  for (std::size_t owner = 0; owner < n; ++owner) {
    if (owner == liar) continue;
    const auto& failure = h.nodes[owner]->failure();
    ASSERT_TRUE(failure.has_value()) << "owner " << owner;
    EXPECT_EQ(failure->suspect, h.members[liar]) << failure->reason;
  }
}

TEST(CheckedOwners, AProofProvesNothingUnlessTwoStatementsOfTheRightSignersDisagree) {
  const std::vector<PeerKey> members = testing::ring_of(3);
  std::vector<secure::KeyPair> keys;
  for (std::uint8_t i = 1; i <= 3; ++i) keys.push_back(testing::key(i));
  const auto statement = [&](std::size_t signer, StatementKind kind, std::uint32_t segment,
                             std::uint8_t digest, std::uint32_t attempt = 1) {
    Digest d{};
    d[0] = digest;
    return sign_statement(keys[signer], kHarnessRun, 5, attempt, kind, segment, d);
  };
  const auto judge = [&](const Statement& a, const Statement& b) {
    return proven_at_fault(kHarnessRun, MisconductProof{.first = a, .second = b}, members);
  };
  const auto C = StatementKind::contribution;
  const auto R = StatementKind::result;
  EXPECT_EQ(judge(statement(0, C, 1, 1), statement(0, C, 1, 2)), std::set<PeerKey>{members[0]});
  EXPECT_EQ(judge(statement(1, R, 1, 1), statement(2, R, 1, 2)),
            (std::set<PeerKey>{members[1], members[2]}));
  EXPECT_EQ(judge(statement(2, R, 1, 1), statement(1, R, 1, 2)),
            (std::set<PeerKey>{members[1], members[2]}))
      << "in either order";
  EXPECT_TRUE(judge(statement(0, C, 1, 1), statement(0, C, 1, 1)).empty()) << "equal digests";
  EXPECT_TRUE(judge(statement(0, C, 1, 1), statement(1, C, 1, 2)).empty()) << "two signers";
  EXPECT_TRUE(judge(statement(0, C, 1, 1), statement(0, C, 2, 2)).empty()) << "two segments";
  EXPECT_TRUE(judge(statement(0, C, 1, 1), statement(0, C, 1, 2, 2)).empty()) << "two attempts";
  EXPECT_TRUE(judge(statement(1, R, 1, 1), statement(0, R, 1, 2)).empty())
      << "0 is neither owner nor checker of segment 1";
  EXPECT_TRUE(judge(statement(1, R, 7, 1), statement(2, R, 7, 2)).empty()) << "no segment 7";
  Statement forged = statement(0, C, 1, 2);
  forged.signature[3] ^= 1;
  EXPECT_TRUE(judge(statement(0, C, 1, 1), forged).empty()) << "a signature that fails";
  Statement other_run = statement(0, C, 1, 2);
  other_run = sign_statement(keys[0], "another run", 5, 1, C, 1, other_run.digest);
  EXPECT_TRUE(judge(statement(0, C, 1, 1), other_run).empty()) << "another run's statement";
  const std::vector<PeerKey> others = testing::ring_of(2);
  const Statement outsider_a = sign_statement(testing::key(9), kHarnessRun, 5, 1, C, 1, {});
  Statement outsider_b = outsider_a;
  outsider_b = sign_statement(testing::key(9), kHarnessRun, 5, 1, C, 1, Digest{1});
  EXPECT_TRUE(judge(outsider_a, outsider_b).empty()) << "not a member of the group";
}

TEST(CheckedOwners, AMalformedStatementIsRefused) {
  ByteWriter w;
  write_statement(
      w, sign_statement(testing::key(1), kHarnessRun, 1, 1, StatementKind::result, 0, Digest{}));
  std::vector<std::byte> bytes = w.finish();
  ASSERT_EQ(bytes.size(), kStatementBytes);
  bytes[32 + 8 + 4] = std::byte{7};  // the kind
  ByteReader bad_kind(bytes, "a statement");
  EXPECT_THROW(read_statement(bad_kind), Error);
  ByteReader short_one(std::span<const std::byte>(bytes).first(kStatementBytes - 1), "a statement");
  EXPECT_THROW(read_statement(short_one), Error);
}

}  // namespace
}  // namespace loco::proto
