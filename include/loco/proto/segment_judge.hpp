#pragma once
// A dispute decided by evidence (docs/SECURITY.md, "Members lie"): the owner and the checker of a
// segment of a checked direct exchange (owner_check.hpp) signed different means, and one of the
// two lied. The tracker names a judge, a member of the attempt's group that is neither of them
// (tracker_judging.cpp), and every member of that group sends the judge its contribution to the
// segment, the bytes it sent the owner and the checker (judge_messages.hpp). The judge recomputes
// the segment's mean with the code the owner runs (segment_sum.hpp: the attempt's trim, weights and
// norm bound; its one quantization with the attempt's seed) and signs the digest it found
// (StatementKind::verdict). Sans-I/O.
//
// What the judge trusts: nothing a member says alone. Each contributor's bytes must hash to the
// digest it signed in the attempt (its contribution statement), which the judge takes from the
// lists the owner and the checker summed (JudgeInputs; the owner hands the same list to its checker
// in the attempt): a contributor cannot send the judge other bytes than it sent them without
// signing a second digest, and two lists that hold two signed digests of one contributor prove it
// equivocated (the verdict carries the proof). A contributor's bytes must also decode within the
// attempt's bounds, as the owner and the checker checked them.
// The verdict is undecided (its `missing` names who) when a contributor's bytes do not come, do
// not match or are out of bounds, or when neither list comes; the tracker then falls back to
// counting (tracker_judging.cpp).
//
// Call order: construct (the judge's own contribution is read from its encoded update then),
// on_chunk() and on_inputs() as messages come, close() at the grace's end; after each, drain
// poll_verdict(), which yields one verdict once everything is in (or at close()). Extra polls are
// harmless.
//
// Cost: the segment's contributions from all N members (S·c/N bytes each, S values, c bytes a
// value: one update's worth in all) held decoded only until their chunk is summed
// (segment_sum.hpp), and the judge's own (a copy, S·c/N bytes, for the judge's life); one decode
// of each, the segment's mean encoded once, one signature.

#include <cstdint>
#include <optional>
#include <vector>

#include "loco/proto/all_reduce.hpp"
#include "loco/proto/encoded_update.hpp"
#include "loco/proto/judge_messages.hpp"
#include "loco/proto/segment_sum.hpp"

namespace loco::proto {

// What `verdict` finds about the dispute `call` names (the tracker's reading):
//   owner_lied / checker_lied  the judge's digest is the other's and not this one's
//   neither_matches            the judge's digest is neither's: the judge is a third disputer (it,
//                              or both of the two, lied), and the judge's word convicts no one
//   undecided                  the verdict names who did not send what it owed, or a proof
// Nothing when the verdict is not the called judge's signed verdict on that case.
enum class Finding : std::uint8_t { owner_lied, checker_lied, neither_matches, undecided };
std::optional<Finding> judge_finding(std::string_view run_id, const JudgeCall& call,
                                     const Verdict& verdict);

class SegmentJudge {
 public:
  // `config`: the judged attempt's collective as this member ran it (its group, chunk, codec, seed,
  // trim, weights, bounds, signer and run id; `self` is the judge); `own`: this member's encoded
  // update of the round (read here only); `call`: the tracker's, for that attempt.
  SegmentJudge(AllReduceConfig config, const EncodedUpdate& own, const JudgeCall& call);

  // Chunk `chunk.chunk` of member `from`'s contribution. Messages of another case or from outside
  // the group are ignored (the caller routes by case); a chunk out of order, past the segment's
  // end, that does not decode or is out of bounds marks its sender as not having sent its bytes.
  void on_chunk(const PeerKey& from, const JudgeChunk& chunk);
  // The owner's or the checker's list of the contribution statements it summed. A list from
  // another member, a second one, or one whose statements are not the group's contribution
  // statements for the segment (signed by each member, in order) is ignored.
  void on_inputs(const PeerKey& from, const JudgeInputs& inputs);
  // The grace is over: decide with what came.
  void close();
  std::optional<Verdict> poll_verdict();

  const JudgeCall& call() const { return call_; }

 private:
  std::size_t chunks() const { return sum_.chunks(); }
  std::size_t chunk_size(std::size_t k) const;
  std::size_t index_of(const PeerKey& member) const;
  void add(std::size_t member, std::size_t k, std::span<const std::byte> bytes);
  void finish_chunk(std::size_t k);
  bool everything_in() const;
  void decide();
  // The contribution statement of member m both lists agree on (or the one list that came).
  const Statement* reference(std::size_t m) const;

  AllReduceConfig config_;
  JudgeCall call_;
  std::size_t values_ = 0;
  std::size_t begin_ = 0, end_ = 0;  // the segment's values
  std::size_t unit_ = 0;             // the direct exchange's chunk (encoded_update.hpp)
  SegmentSum sum_;
  std::vector<std::vector<std::byte>> own_;  // this member's chunks of the segment
  std::vector<bool> bad_;  // per member: sent bytes out of order, undecodable or out of bounds
  std::optional<std::vector<Statement>> owner_list_, checker_list_;
  std::vector<float> scratch_;
  SegmentDigest result_;
  std::size_t chunks_done_ = 0;
  bool closed_ = false, decided_ = false;
  std::optional<Verdict> verdict_;
};

}  // namespace loco::proto
