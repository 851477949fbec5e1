#pragma once
// The messages of a dispute decided by evidence (segment_judge.hpp, docs/PROTOCOL.md "Disputes
// decided by evidence"): the tracker names a judge (judge_call), every member of the disputed
// attempt sends the judge its contribution to the segment (judge_chunk), the owner and the checker
// the contribution statements they summed (judge_inputs), and the judge tells the tracker what it
// found (verdict). Each decoder checks the size against its type's limit, the version, every count
// before it allocates, and that nothing trails, and throws Error(format) naming the message;
// signatures are checked by the receiver, which knows whose they must be.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "loco/proto/message_type.hpp"
#include "loco/proto/owner_check.hpp"

namespace loco::proto {

// tracker -> every member of the disputed attempt: `judge` judges segment `segment` of (round,
// attempt), whose owner and checker signed `owner_result` and `checker_result` (the dispute), and
// decides with what it has `grace_ms` after the call (at most kMaxJudgeGraceMs).
inline constexpr std::uint32_t kMaxJudgeGraceMs = 3'600'000;
struct JudgeCall {
  static constexpr MessageType kType = MessageType::judge_call;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::uint32_t segment = 0;
  PeerKey judge{};
  std::uint32_t grace_ms = 0;
  Statement owner_result{};
  Statement checker_result{};
};
std::vector<std::byte> encode(const JudgeCall& m);
// Also refuses statements that are not result statements of the call's round, attempt and
// segment.
JudgeCall decode_judge_call(std::span<const std::byte> body);

// member -> judge: chunk `chunk` of its contribution to the segment, the bytes it sent the owner
// (a unit of its encoded update, encoded_update.hpp). Chunks come in order.
struct JudgeChunk {
  static constexpr MessageType kType = MessageType::judge_chunk;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::uint32_t segment = 0;
  std::uint32_t chunk = 0;
  std::vector<std::byte> bytes;
};
std::vector<std::byte> encode(const JudgeChunk& m);
JudgeChunk decode_judge_chunk(std::span<const std::byte> body);

// owner or checker -> judge: the N contribution statements it took its inputs from, in the group's
// order (what the owner already hands its checker, direct_allreduce.hpp).
struct JudgeInputs {
  static constexpr MessageType kType = MessageType::judge_inputs;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::uint32_t segment = 0;
  std::vector<Statement> inputs;
};
std::vector<std::byte> encode(const JudgeInputs& m);
JudgeInputs decode_judge_inputs(std::span<const std::byte> body);

// judge -> tracker: the judge's signed digest of the segment's mean (StatementKind::verdict) when
// it could compute it from bytes that match their senders' signed digests; otherwise who did not
// send what it owed (`missing`: contributors whose bytes did not come or did not match, an owner
// or checker whose list did not come) or a contributor's two signed digests (`equivocation`), and
// the statement's digest is zeros.
struct Verdict {
  static constexpr MessageType kType = MessageType::verdict;
  Statement judged{};
  std::vector<PeerKey> missing;
  std::optional<MisconductProof> equivocation;

  bool decided() const { return missing.empty() && !equivocation; }
};
std::vector<std::byte> encode(const Verdict& m);
// Also refuses a statement that is not a verdict.
Verdict decode_verdict(std::span<const std::byte> body);

}  // namespace loco::proto
