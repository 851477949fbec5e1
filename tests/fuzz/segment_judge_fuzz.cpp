// Fuzz target: a liar among a disputed segment's members, as its judge sees it
// (proto/segment_judge.hpp). Four members; member 3 judges segment 0 (owner 0, checker 1). The
// first byte picks the liar (0, 1 or 2); every message the liar sends the judge (its chunks, and
// as owner or checker its list) passes through the input, which picks what it does with it: send
// it, drop it, flip a byte, send it twice, renumber its chunk, send the input's bytes as the body
// (through the decoder), or, in a list, put a second statement of its own there, signed over a
// digest the input picks. The honest members' messages come in an order the input picks too. Then
// the invariants: nothing throws out of the judge; after close() there is a verdict; a decided
// verdict holds the digest an honest run finds; no honest member is named as missing; a proof of
// equivocation shows the liar alone.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/segment_judge.hpp"

namespace {

using namespace loco;
using namespace loco::proto;
namespace th = loco::proto::testing;

constexpr std::size_t kMembers = 4, kJudge = 3, kValues = 96, kChunk = 8;
constexpr std::string_view kRun = "judge-fuzz";

[[noreturn]] void broken(const std::string& what) {
  std::fprintf(stderr, "invariant broken: %s\n", what.c_str());
  std::abort();
}

struct Setup {
  std::unique_ptr<compress::Codec> codec = compress::make_codec("int8:block=8");
  std::vector<secure::KeyPair> keys;
  std::vector<PeerKey> members;
  std::vector<EncodedUpdate> updates;
  std::vector<std::vector<JudgeChunk>> chunks;  // per member: its chunks of segment 0
  JudgeInputs list{.round = 5, .attempt = 2, .segment = 0, .inputs = {}};
  JudgeCall call{};
  Digest honest{};

  Setup() {
    Rng rng(7);
    for (std::size_t i = 0; i < kMembers; ++i) {
      keys.push_back(th::key(static_cast<std::uint8_t>(i + 1)));
      members.push_back(keys.back().public_key());
    }
    const std::size_t unit = direct_chunk_values(kValues, kChunk);
    const std::size_t end = segment_begin(kValues, kMembers, 1, unit);
    for (std::size_t i = 0; i < kMembers; ++i) {
      std::vector<float> values(kValues);
      for (float& x : values) x = rng.normal();
      updates.emplace_back(*codec, values, unit, 11, members[i]);
      chunks.emplace_back();
      SegmentDigest d;
      for (std::size_t at = 0, k = 0; at < end; at += unit, ++k) {
        const auto bytes = updates[i].unit(at / unit);
        d.add_bytes(bytes);
        chunks[i].push_back(JudgeChunk{.round = 5,
                                       .attempt = 2,
                                       .segment = 0,
                                       .chunk = static_cast<std::uint32_t>(k),
                                       .bytes = {bytes.begin(), bytes.end()}});
      }
      list.inputs.push_back(
          sign_statement(keys[i], kRun, 5, 2, StatementKind::contribution, 0, d.finish()));
    }
    Digest one{}, two{};
    one[0] = 1;
    two[0] = 2;
    call = JudgeCall{
        .round = 5,
        .attempt = 2,
        .segment = 0,
        .judge = members[kJudge],
        .grace_ms = 1000,
        .owner_result = sign_statement(keys[0], kRun, 5, 2, StatementKind::result, 0, one),
        .checker_result = sign_statement(keys[1], kRun, 5, 2, StatementKind::result, 0, two)};
    SegmentJudge clean(config(), updates[kJudge], call);
    for (std::size_t m = 0; m < kJudge; ++m)
      for (const JudgeChunk& c : chunks[m]) clean.on_chunk(members[m], c);
    clean.on_inputs(members[0], list);
    clean.on_inputs(members[1], list);
    const auto v = clean.poll_verdict();
    if (!v || !v->decided()) broken("an honest judging is not decided");
    honest = v->judged.digest;
  }

  AllReduceConfig config() const {
    return AllReduceConfig{.round = 5,
                           .attempt = 2,
                           .members = members,
                           .self = kJudge,
                           .chunk_values = kChunk,
                           .codec = codec.get(),
                           .seed = 11,
                           .median_norm = 1.0f,
                           .norm_limit = 10.0f,
                           .trim = 1,
                           .weights = {},
                           .buffers = nullptr,
                           .check_owners = true,
                           .signer = &keys[kJudge],
                           .run_id = std::string(kRun)};
  }
};

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  std::span<const std::byte> rest(std::size_t most) {
    const std::size_t n = std::min(most, size_ - at_);
    const auto out = std::as_bytes(std::span(data_ + at_, n));
    at_ += n;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// A message of member `from` to the judge.
struct Message {
  std::size_t from;
  std::optional<JudgeChunk> chunk;
  std::optional<JudgeInputs> list;
};

// What the liar does with `m`: the messages the judge gets instead.
std::vector<Message> lie(const Setup& s, Input& in, Message m) {
  switch (in.next() % 7) {
    case 0: return {m};
    case 1: return {};
    case 2:
      if (m.chunk && !m.chunk->bytes.empty())
        m.chunk->bytes[in.next() % m.chunk->bytes.size()] ^= std::byte{1};
      if (m.list) m.list->inputs[in.next() % kMembers].digest[0] ^= 1;
      return {m};
    case 3: return {m, m};
    case 4:
      if (m.chunk) m.chunk->chunk = in.next() % 5;
      if (m.list) m.list->inputs.pop_back();
      return {m};
    case 5: {
      try {  // the input's bytes as the body, through the decoder
        const auto body = in.rest(in.next());
        if (m.chunk) m.chunk = decode_judge_chunk(body);
        if (m.list) m.list = decode_judge_inputs(body);
      } catch (const Error&) {
        return {};
      }
      return {m};
    }
    default:
      if (m.list) {  // a second statement of its own, signed
        Digest d{};
        d[0] = in.next();
        m.list->inputs[m.from] =
            sign_statement(s.keys[m.from], kRun, 5, 2, StatementKind::contribution, 0, d);
      }
      return {m};
  }
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  return {{0, 0, 0, 0, 0, 0, 0}, {1, 2, 6, 0, 1, 4, 3}, {2, 5, 3, 1, 2, 3}};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Setup s;
  Input in(data, size);
  const std::size_t liar = in.next() % kJudge;
  std::vector<std::deque<Message>> queues(kJudge);
  for (std::size_t m = 0; m < kJudge; ++m) {
    for (const JudgeChunk& c : s.chunks[m]) queues[m].push_back({m, c, std::nullopt});
    if (m == 0 || m == 1) queues[m].push_back({m, std::nullopt, s.list});
  }
  SegmentJudge judge(s.config(), s.updates[kJudge], s.call);
  for (;;) {
    std::vector<std::size_t> busy;
    for (std::size_t m = 0; m < kJudge; ++m)
      if (!queues[m].empty()) busy.push_back(m);
    if (busy.empty()) break;
    const std::size_t m = busy[in.next() % busy.size()];
    Message next = std::move(queues[m].front());
    queues[m].pop_front();
    for (const Message& out : m == liar ? lie(s, in, std::move(next)) : std::vector{next}) {
      if (out.chunk) judge.on_chunk(s.members[m], *out.chunk);
      if (out.list) judge.on_inputs(s.members[m], *out.list);
    }
  }
  judge.close();
  const std::optional<Verdict> v = judge.poll_verdict();
  if (!v) broken("no verdict after close()");
  if (v->decided() && v->judged.digest != s.honest) broken("a decided verdict not the honest one");
  for (const PeerKey& k : v->missing)
    if (k != s.members[liar]) broken("an honest member named as missing");
  if (v->equivocation &&
      proven_at_fault(kRun, *v->equivocation, s.members) != std::set<PeerKey>{s.members[liar]})
    broken("a proof of equivocation that does not show the liar alone");
  if (judge_finding(kRun, s.call, *v) == std::nullopt) broken("the judge's verdict is not its own");
  return 0;
}
