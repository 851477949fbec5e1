// A dispute decided by evidence (segment_judge.hpp): the judge recomputes a disputed segment from
// its members' contributions and finds the digest the honest one of owner and checker signed; a
// liar of the two is found on its first lie, an honest one never; bytes that do not match their
// signed digest, a silent contributor and lists that disagree leave the verdict undecided and say
// who; the judge's messages round-trip and refuse damage.

#include "loco/proto/segment_judge.hpp"

#include <gtest/gtest.h>

#include <map>

#include "all_reduce_harness.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

using testing::AllReduceHarness;
using testing::kDirect;
using testing::kHarnessRun;

constexpr std::size_t kValues = 300, kChunk = 32;

// An honest checked exchange of `n` members (round 7, attempt 1), run to the end, with every
// result statement it signed kept; then what its members would send a judge of segment g.
struct Dispute {
  std::size_t n;
  std::uint64_t seed_;
  std::size_t trim;
  std::vector<float> weights;
  AllReduceHarness h;
  std::map<std::size_t, Statement> results_of_owner, results_of_checker;  // by segment
  std::vector<EncodedUpdate> encoded;

  Dispute(std::size_t members, std::uint64_t seed, std::size_t trim_count = 0,
          std::vector<float> w = {})
      : n(members),
        seed_(seed),
        trim(trim_count),
        weights(w),
        h(kDirect, members, kValues, "int8:block=64", kChunk, seed, 1.0f, trim_count, w,
          /*apart=*/true, /*check_owners=*/true) {
    h.tamper = [this](std::size_t from, std::size_t, std::vector<std::byte>& body) {
      std::span<const std::byte> payload;
      const ChunkHeader header = decode_chunk(body, payload);
      if (header.phase != 3 || header.step != 2) return;
      ByteReader r(payload, "a statement");
      const Statement s = read_statement(r);
      (from == s.segment ? results_of_owner : results_of_checker)[s.segment] = s;
    };
    h.run(seed);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_TRUE(h.nodes[i]->done()) << "member " << i;
      encoded.emplace_back(*h.codec, h.updates[i], unit(), seed, h.members[i]);
    }
  }

  std::size_t unit() const { return direct_chunk_values(kValues, kChunk); }
  AllReduceConfig config(std::size_t self) const {
    return AllReduceConfig{.round = 7,
                           .attempt = 1,
                           .members = h.members,
                           .self = self,
                           .chunk_values = kChunk,
                           .codec = h.codec.get(),
                           .seed = seed_,
                           .median_norm = 1.0f,
                           .norm_limit = 10.0f,
                           .trim = trim,
                           .weights = weights,
                           .buffers = nullptr,
                           .check_owners = true,
                           .signer = &h.signers[self],
                           .run_id = std::string(kHarnessRun)};
  }
  // The dispute on segment g with the owner's or the checker's digest changed.
  JudgeCall call(std::size_t g, std::size_t judge, bool owner_lies, bool checker_lies) const {
    JudgeCall c{.round = 7,
                .attempt = 1,
                .segment = static_cast<std::uint32_t>(g),
                .judge = h.members[judge],
                .grace_ms = 1000,
                .owner_result = results_of_owner.at(g),
                .checker_result = results_of_checker.at(g)};
    const auto lie = [&](Statement& s, std::size_t signer) {
      Digest d = s.digest;
      d[0] ^= 1;
      s = sign_statement(h.signers[signer], kHarnessRun, 7, 1, StatementKind::result,
                         static_cast<std::uint32_t>(g), d);
    };
    if (owner_lies) lie(c.owner_result, g);
    if (checker_lies) lie(c.checker_result, checker_of(g, n));
    return c;
  }

  // Member m's contribution to segment g: its chunks, and its signed statement of their digest.
  std::vector<JudgeChunk> chunks(std::size_t m, std::size_t g) const {
    const std::size_t begin = segment_begin(kValues, n, g, unit());
    const std::size_t end = segment_begin(kValues, n, g + 1, unit());
    std::vector<JudgeChunk> out;
    for (std::size_t at = begin, k = 0; at < end; at += unit(), ++k) {
      const auto bytes = encoded[m].unit(at / unit());
      out.push_back(JudgeChunk{.round = 7,
                               .attempt = 1,
                               .segment = static_cast<std::uint32_t>(g),
                               .chunk = static_cast<std::uint32_t>(k),
                               .bytes = {bytes.begin(), bytes.end()}});
    }
    return out;
  }
  Statement contribution(std::size_t m, std::size_t g) const {
    SegmentDigest d;
    for (const JudgeChunk& c : chunks(m, g)) d.add_bytes(c.bytes);
    return sign_statement(h.signers[m], kHarnessRun, 7, 1, StatementKind::contribution,
                          static_cast<std::uint32_t>(g), d.finish());
  }
  JudgeInputs inputs(std::size_t g) const {
    JudgeInputs in{
        .round = 7, .attempt = 1, .segment = static_cast<std::uint32_t>(g), .inputs = {}};
    for (std::size_t m = 0; m < n; ++m) in.inputs.push_back(contribution(m, g));
    return in;
  }

  // Everything the members send judge `judge` of segment g, but from those in `silent`.
  std::optional<Verdict> judge(std::size_t judge, const JudgeCall& call,
                               const std::set<std::size_t>& silent = {}) const {
    SegmentJudge j(config(judge), encoded[judge], call);
    const std::size_t g = call.segment;
    for (std::size_t m = 0; m < n; ++m)
      if (m != judge && !silent.contains(m))
        for (const JudgeChunk& c : chunks(m, g)) j.on_chunk(h.members[m], c);
    if (!silent.contains(g)) j.on_inputs(h.members[g], inputs(g));
    if (!silent.contains(checker_of(g, n))) j.on_inputs(h.members[checker_of(g, n)], inputs(g));
    std::optional<Verdict> v = j.poll_verdict();
    if (v) return v;
    j.close();
    return j.poll_verdict();
  }
};

TEST(SegmentJudge, AJudgeFindsTheDigestTheHonestOwnerAndCheckerSigned) {
  std::uint64_t seed = 40;
  for (const std::size_t n : {3, 4, 6})
    for (const std::size_t trim : {std::size_t{0}, (n - 1) / 2}) {
      SCOPED_TRACE(::testing::Message() << n << " members, trim " << trim);
      std::vector<float> weights;
      if (trim == 0) weights.assign(n, 1.0f), weights[0] = 0.5f, weights[1] = 1.5f;
      const Dispute d(n, seed++, trim, weights);
      for (std::size_t g = 0; g < n; ++g) {
        const std::size_t judge = (g + 2) % n;
        const JudgeCall call = d.call(g, judge, false, false);
        ASSERT_EQ(call.owner_result.digest, call.checker_result.digest) << "an honest exchange";
        const std::optional<Verdict> v = d.judge(judge, call);
        ASSERT_TRUE(v.has_value());
        ASSERT_TRUE(v->decided()) << v->missing.size() << " missing";
        EXPECT_EQ(v->judged.digest, call.owner_result.digest) << "segment " << g;
        EXPECT_TRUE(verify_statement(kHarnessRun, v->judged));
      }
    }
}

TEST(SegmentJudge, ALiarOfTheTwoIsFoundOnItsFirstLieAndTheHonestOneNever) {
  const Dispute d(5, 41);
  const std::size_t g = 2, judge = 4;
  const auto finding = [&](bool owner_lies, bool checker_lies) {
    const JudgeCall call = d.call(g, judge, owner_lies, checker_lies);
    return judge_finding(kHarnessRun, call, *d.judge(judge, call));
  };
  EXPECT_EQ(finding(true, false), Finding::owner_lied);
  EXPECT_EQ(finding(false, true), Finding::checker_lied);
  EXPECT_EQ(finding(true, true), Finding::neither_matches);
}

TEST(SegmentJudge, AVerdictCountsOnlyAsTheCalledJudgesSignedStatement) {
  const Dispute d(4, 42);
  const JudgeCall call = d.call(1, 3, true, false);
  Verdict v = *d.judge(3, call);
  ASSERT_EQ(judge_finding(kHarnessRun, call, v), Finding::owner_lied);
  Verdict forged = v;
  forged.judged.digest = call.owner_result.digest;  // the liar's digest, the judge's signature
  EXPECT_FALSE(judge_finding(kHarnessRun, call, forged));
  JudgeCall other = call;
  other.judge = d.h.members[0];  // signed by member 3, but member 0 was called
  EXPECT_FALSE(judge_finding(kHarnessRun, other, v));
  EXPECT_FALSE(judge_finding("another run", call, v));
}

TEST(SegmentJudge, BytesThatAreNotTheSignedOnesLeaveTheVerdictUndecidedNamingTheirSender) {
  const Dispute d(5, 43);
  const std::size_t g = 0, judge = 3, liar = 4;
  const JudgeCall call = d.call(g, judge, true, false);
  SegmentJudge j(d.config(judge), d.encoded[judge], call);
  for (std::size_t m = 0; m < 5; ++m) {
    if (m == judge) continue;
    std::vector<JudgeChunk> chunks = d.chunks(m, g);
    if (m == liar) chunks = d.chunks(2, g);  // another member's bytes: valid, but not its own
    for (JudgeChunk& c : chunks) j.on_chunk(d.h.members[m], c);
  }
  j.on_inputs(d.h.members[g], d.inputs(g));
  j.on_inputs(d.h.members[checker_of(g, 5)], d.inputs(g));
  const std::optional<Verdict> v = j.poll_verdict();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->missing, std::vector<PeerKey>{d.h.members[liar]});
  EXPECT_EQ(judge_finding(kHarnessRun, call, *v), Finding::undecided);
}

TEST(SegmentJudge, ASilentContributorIsNamedAtTheGracesEnd) {
  const Dispute d(4, 44);
  const JudgeCall call = d.call(1, 3, false, true);
  const std::optional<Verdict> v = d.judge(3, call, {0});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->missing, std::vector<PeerKey>{d.h.members[0]});
  // Neither list: both parties to the dispute are named (each owed one).
  const std::optional<Verdict> none = d.judge(3, call, {1, 2});
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->missing, (std::vector<PeerKey>{d.h.members[1], d.h.members[2]}));
  // One list is enough at the grace's end: the liar may keep its own.
  const std::optional<Verdict> one = d.judge(3, call, {2});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->missing, std::vector<PeerKey>{d.h.members[2]}) << "member 2's bytes, not list";
}

TEST(SegmentJudge, ListsWithTwoSignedDigestsOfOneContributorProveItEquivocated) {
  const Dispute d(4, 45);
  const std::size_t g = 1, judge = 3, liar = 0;
  const JudgeCall call = d.call(g, judge, true, false);
  SegmentJudge j(d.config(judge), d.encoded[judge], call);
  for (std::size_t m = 0; m < 4; ++m)
    if (m != judge)
      for (const JudgeChunk& c : d.chunks(m, g)) j.on_chunk(d.h.members[m], c);
  JudgeInputs second = d.inputs(g);
  Digest other = second.inputs[liar].digest;
  other[5] ^= 1;
  second.inputs[liar] =
      sign_statement(d.h.signers[liar], kHarnessRun, 7, 1, StatementKind::contribution, 1, other);
  j.on_inputs(d.h.members[g], d.inputs(g));
  j.on_inputs(d.h.members[checker_of(g, 4)], second);
  const std::optional<Verdict> v = j.poll_verdict();
  ASSERT_TRUE(v.has_value() && v->equivocation.has_value());
  EXPECT_EQ(proven_at_fault(kHarnessRun, *v->equivocation, d.h.members),
            std::set<PeerKey>{d.h.members[liar]});
  EXPECT_EQ(judge_finding(kHarnessRun, call, *v), Finding::undecided);
}

TEST(SegmentJudge, AListNotOfTheGroupsSignedContributionsIsIgnored) {
  const Dispute d(4, 46);
  const JudgeCall call = d.call(1, 3, true, false);
  SegmentJudge j(d.config(3), d.encoded[3], call);
  JudgeInputs forged = d.inputs(1);
  forged.inputs[0].digest[0] ^= 1;  // member 0's signature no longer holds
  j.on_inputs(d.h.members[1], forged);
  j.on_inputs(d.h.members[0], d.inputs(1));  // member 0 neither owns nor checks segment 1
  for (std::size_t m : {0, 1, 2})
    for (const JudgeChunk& c : d.chunks(m, 1)) j.on_chunk(d.h.members[m], c);
  EXPECT_FALSE(j.poll_verdict()) << "no list in yet";
  j.on_inputs(d.h.members[2], d.inputs(1));
  j.close();
  const std::optional<Verdict> v = j.poll_verdict();
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(judge_finding(kHarnessRun, call, *v), Finding::owner_lied);
}

// --- the messages ---

template <typename M, typename Decode>
void expect_refused_when_damaged(const std::vector<std::byte>& body, Decode decode,
                                 bool open_ended = false) {
  for (std::size_t n = 0; n < body.size(); ++n) {
    if (open_ended && n >= 1 + 20) continue;  // a chunk's bytes may be any length
    EXPECT_THROW(decode(std::span(body).first(n)), Error) << "truncated to " << n;
  }
  if (!open_ended) {
    auto trailing = body;
    trailing.push_back(std::byte{0});
    EXPECT_THROW(decode(trailing), Error) << "trailing byte";
  }
  auto version = body;
  version[0] = std::byte{99};
  EXPECT_THROW(decode(version), Error) << "version 99";
  std::vector<std::byte> oversized(info(M::kType).max_bytes + 1);
  oversized[0] = body[0];
  EXPECT_THROW(decode(oversized), Error) << "above the size limit";
}

TEST(JudgeMessages, EachRoundTripsAndRefusesDamage) {
  const Dispute d(3, 47);
  const JudgeCall call = d.call(0, 2, true, false);
  const JudgeCall back = decode_judge_call(encode(call));
  EXPECT_EQ(back.judge, call.judge);
  EXPECT_EQ(back.owner_result.digest, call.owner_result.digest);
  EXPECT_EQ(back.checker_result.signature, call.checker_result.signature);
  expect_refused_when_damaged<JudgeCall>(encode(call), decode_judge_call);
  JudgeCall wrong = call;
  wrong.owner_result.segment = 1;  // not the judged segment's
  EXPECT_THROW(decode_judge_call(encode(wrong)), Error);

  const JudgeChunk chunk = d.chunks(1, 0)[0];
  const JudgeChunk chunk_back = decode_judge_chunk(encode(chunk));
  EXPECT_EQ(chunk_back.bytes, chunk.bytes);
  EXPECT_EQ(chunk_back.chunk, chunk.chunk);
  expect_refused_when_damaged<JudgeChunk>(encode(chunk), decode_judge_chunk, true);

  const JudgeInputs inputs = d.inputs(0);
  const JudgeInputs inputs_back = decode_judge_inputs(encode(inputs));
  ASSERT_EQ(inputs_back.inputs.size(), 3u);
  EXPECT_EQ(inputs_back.inputs[2].digest, inputs.inputs[2].digest);
  expect_refused_when_damaged<JudgeInputs>(encode(inputs), decode_judge_inputs);

  Verdict v = *d.judge(2, call);
  v.missing = {d.h.members[1]};
  v.equivocation = MisconductProof{.first = inputs.inputs[0], .second = inputs.inputs[1]};
  const Verdict v_back = decode_verdict(encode(v));
  EXPECT_EQ(v_back.judged.digest, v.judged.digest);
  EXPECT_EQ(v_back.missing, v.missing);
  ASSERT_TRUE(v_back.equivocation.has_value());
  EXPECT_EQ(v_back.equivocation->second.signer, d.h.members[1]);
  expect_refused_when_damaged<Verdict>(encode(v), decode_verdict);
  Verdict not_a_verdict = v;
  not_a_verdict.judged.kind = StatementKind::result;
  EXPECT_THROW(decode_verdict(encode(not_a_verdict)), Error);
}

TEST(JudgeMessages, CountsAreCheckedBeforeAllocating) {
  for (const MessageType type : {MessageType::judge_inputs, MessageType::verdict}) {
    ByteWriter w = start_message(type);
    if (type == MessageType::judge_inputs) {
      w.u64(7);
      w.u32(1);
      w.u32(0);
    } else {
      Statement verdict;
      verdict.kind = StatementKind::verdict;
      write_statement(w, verdict);
    }
    w.u32(0xffffffff);  // 4 billion entries in a few bytes
    const auto body = w.finish();
    EXPECT_THROW(type == MessageType::judge_inputs ? (void)decode_judge_inputs(body)
                                                   : (void)decode_verdict(body),
                 Error);
  }
}

}  // namespace
}  // namespace loco::proto
