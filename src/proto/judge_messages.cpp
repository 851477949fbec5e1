#include "loco/proto/judge_messages.hpp"

#include <fmt/format.h>

#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {
namespace {

constexpr std::size_t kKeyBytes = 32;

// The (round, attempt, segment) every judge message opens with.
void write_case(ByteWriter& w, std::uint64_t round, std::uint32_t attempt, std::uint32_t segment) {
  w.u64(round);
  w.u32(attempt);
  w.u32(segment);
}

template <typename Message>
void read_case(ByteReader& r, Message& m) {
  m.round = r.u64();
  m.attempt = r.u32();
  m.segment = r.u32();
}

}  // namespace

std::vector<std::byte> encode(const JudgeCall& m) {
  ByteWriter w = start_message(m.kType);
  write_case(w, m.round, m.attempt, m.segment);
  w.bytes(m.judge.bytes);
  w.u32(m.grace_ms);
  write_statement(w, m.owner_result);
  write_statement(w, m.checker_result);
  return w.finish();
}

JudgeCall decode_judge_call(std::span<const std::byte> body) {
  ByteReader r = open_message(body, JudgeCall::kType);
  JudgeCall m;
  read_case(r, m);
  r.bytes(m.judge.bytes);
  m.grace_ms = r.u32();
  if (m.grace_ms > kMaxJudgeGraceMs) r.fail(fmt::format("a grace of {} ms", m.grace_ms));
  m.owner_result = read_statement(r);
  m.checker_result = read_statement(r);
  r.expect_end();
  for (const Statement* s : {&m.owner_result, &m.checker_result})
    if (s->kind != StatementKind::result || s->round != m.round || s->attempt != m.attempt ||
        s->segment != m.segment)
      r.fail("a disputed statement that is not a result of the judged segment");
  return m;
}

std::vector<std::byte> encode(const JudgeChunk& m) {
  ByteWriter w = start_message(m.kType, 21 + m.bytes.size());
  write_case(w, m.round, m.attempt, m.segment);
  w.u32(m.chunk);
  w.bytes(m.bytes);
  return w.finish();
}

JudgeChunk decode_judge_chunk(std::span<const std::byte> body) {
  ByteReader r = open_message(body, JudgeChunk::kType);  // the size is checked here
  JudgeChunk m;
  read_case(r, m);
  m.chunk = r.u32();
  const std::span<const std::byte> rest = r.rest();
  m.bytes.assign(rest.begin(), rest.end());
  return m;
}

std::vector<std::byte> encode(const JudgeInputs& m) {
  ByteWriter w = start_message(m.kType);
  write_case(w, m.round, m.attempt, m.segment);
  w.u32(static_cast<std::uint32_t>(m.inputs.size()));
  for (const Statement& s : m.inputs) write_statement(w, s);
  return w.finish();
}

JudgeInputs decode_judge_inputs(std::span<const std::byte> body) {
  ByteReader r = open_message(body, JudgeInputs::kType);
  JudgeInputs m;
  read_case(r, m);
  const std::size_t n = r.count(kMaxMembers, kStatementBytes);
  m.inputs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) m.inputs.push_back(read_statement(r));
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const Verdict& m) {
  ByteWriter w = start_message(m.kType);
  write_statement(w, m.judged);
  w.u32(static_cast<std::uint32_t>(m.missing.size()));
  for (const PeerKey& k : m.missing) w.bytes(k.bytes);
  w.boolean(m.equivocation.has_value());
  if (m.equivocation) {
    write_statement(w, m.equivocation->first);
    write_statement(w, m.equivocation->second);
  }
  return w.finish();
}

Verdict decode_verdict(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Verdict::kType);
  Verdict m;
  m.judged = read_statement(r);
  if (m.judged.kind != StatementKind::verdict)
    r.fail(
        fmt::format("a verdict signed as statement kind {}", static_cast<unsigned>(m.judged.kind)));
  const std::size_t missing = r.count(kMaxMembers, kKeyBytes);
  m.missing.resize(missing);
  for (PeerKey& k : m.missing) r.bytes(k.bytes);
  if (r.boolean()) {
    MisconductProof proof;
    proof.first = read_statement(r);
    proof.second = read_statement(r);
    m.equivocation = proof;
  }
  r.expect_end();
  return m;
}

}  // namespace loco::proto
