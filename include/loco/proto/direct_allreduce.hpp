#pragma once
// Direct all-reduce of a round's outer updates (all_reduce.hpp): every member sends each other
// member its part of the vector and gets the mean of its own part back from each. Sans-I/O.
//
// Cost, for N members, S values, a codec that sends c bytes per value:
//   steps           2: one of reduce-scatter, one of all-gather (N − 1 messages each)
//   bytes per peer  2(N − 1)/N · c·S sent, the same received (+ 22 bytes per chunk): the ring's
//                   (a segment is whole chunks: an owner's share is S/N within a chunk)
//   time            ≈ 2(N − 1)/N · c·S / B + 2L, B the slowest upload, L the one-way latency
// where the ring pays 2(N − 1) latencies on a small update: at N = 4 and 50 ms, 100 ms against
// 300 ms. What it costs: each member holds a link to every other (the mesh does), receives the
// N − 1 parts of its segment at once, and keeps them until the last is in ((N − 1)/N · S floats).
// For groups of thousands the ring's N − 1 messages per member are fewer; DiLoCo groups and gossip
// groups are small.
//
// Memory, besides the result (the mean's chunks as their owners encoded them, c·S bytes, which
// the caller takes as the round's mean: round_mean.hpp, proto/peer_core.hpp; or 4S in a caller's
// fp32 buffer): the encoded update (c·S, kept by the caller for the round, or by the collective
// when it is built from fp32 values), the owner's contributions in
// pooled chunk buffers until each chunk is summed (segment_sum.hpp), and the messages queued
// (each a copy of a unit's bytes, c·S in all, until the driver sends them).
//
// The vector is cut into N segments of whole chunks (segment_begin with direct_chunk_values,
// all_reduce.hpp): chunk k of segment g is one unit of the encoded update, the same values in any
// group. Member g owns segment g. Member i, its update encoded once (encoded_update.hpp):
//   1. reduce-scatter: sends chunk k of segment g, its unit's bytes, to member g, for every g ≠ i;
//      chunk by chunk, the owners in turn (i + 1, i + 2, ...), so every owner gets its first
//      chunks early.
//   2. the owner, once chunk k of its segment is in from all N − 1 others: takes the mean of the N
//      contributions (its own decoded from its own encoded unit, as the others' are; plain,
//      trimmed or weighted: segment_sum.hpp), encodes it once, keeps those bytes as its result
//      and sends them to every other member.
//   3. all-gather: checks member g's bytes (they decode, within the norm bound) and keeps them as
//      segment g of its result.
// So every member's result is the same bytes, and decodes to the same values. With N = 1 the
// result is the member's own update as encoded: the same rule as above.
// Checks on every received chunk (check_received: an update, or the mean, as one contribution):
// it comes from a member, for this round and attempt, in order from that member, and decodes. A
// chunk that fails ends the collective with failure() naming its sender.
//
// With checked owners (config.check_owners, owner_check.hpp) an owner cannot return a wrong mean
// unnoticed. Each segment g also has a checker, member g + 1 (mod N), which reduces it too:
//   1. every member sends chunk k of segment g to both (phase 0 to the owner, phase 2 to the
//      checker, the same bytes), then a signed statement of the digest of what it sent to g
//      (phase 3);
//   2. the owner sends its result as before, then signs its digest; it also hands the checker the
//      N contribution statements it took its inputs from. The checker compares them with the ones
//      it was sent: a member that signed two digests for one segment is proven to equivocate;
//      otherwise the checker signs the digest of its own result;
//   3. every member accepts segment g only when the owner's bytes, the owner's statement and the
//      checker's statement agree; two signed statements that differ are a proof for the tracker.
//      The checker is not sent the owner's bytes: it keeps its own mean of g, which are the same
//      bytes when the two statements agree (their digests cover the bytes).
// Cost: each member sends each chunk to two members instead of one (reduce-scatter bytes ×≈ 2),
// the all-gather one message fewer a chunk (none at N = 2: each member then sends its update once
// and a few statements), the checker's decode and mean, and N + 2 signatures and O(N) checks per
// member.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "loco/proto/all_reduce.hpp"
#include "loco/proto/encoded_update.hpp"
#include "loco/proto/segment_sum.hpp"

namespace loco::proto {

class DirectAllReduce final : public AllReduce {
 public:
  // `update`: this member's encoded update, in units of direct_chunk_values(update.values(),
  // config.chunk_values) (all_reduce.hpp), outliving the collective; the mean is kept encoded
  // (take_mean()).
  DirectAllReduce(AllReduceConfig config, const EncodedUpdate& update);
  // Encodes `update` at start() (seeded by config.seed, for this member's key), then as above,
  // except that `result` (update.values() floats; it may be the same span) holds the mean decoded
  // once done().
  DirectAllReduce(AllReduceConfig config, std::span<const float> update, std::span<float> result);

  // Once done(), built without an fp32 result: chunk k of the mean (values [k·U, ...), U the
  // collective's chunk) as its owner encoded it, moved out.
  std::vector<std::vector<std::byte>> take_mean();

  // Checked owners: the N contribution statements this member summed for `segment` (the one it
  // owns or the one it checks), once all are in; what it sends a judge of that segment
  // (segment_judge.hpp). Nothing for another segment, or before.
  std::optional<std::vector<Statement>> inputs_of(std::size_t segment) const;

  void start() override;
  void on_message(const PeerKey& from, std::span<const std::byte> body) override;
  bool done() const override;
  bool needs_link_to(const PeerKey& peer) const override;

 private:
  // What this member knows of segment g: the digest of the owner's bytes it decoded, and the
  // owner's and the checker's signed statements of their result (checked owners).
  struct SegmentCheck {
    SegmentDigest received;
    std::optional<Digest> received_digest;
    std::optional<Statement> owner, checker;
    bool settled = false;
  };

  std::size_t checked_segment() const;  // the segment this member checks
  std::size_t index_of(const PeerKey& member) const;
  void send_contributions();
  void on_reduce(std::size_t from, std::size_t segment, std::size_t k, const ChunkHeader& h,
                 std::span<const std::byte> encoded);
  void on_gather(std::size_t from, std::size_t k, const ChunkHeader& h,
                 std::span<const std::byte> encoded);
  // Decodes chunk k of `segment` from member `from` into `out` (its size) and checks it
  // (decode_checked); a chunk refused comes with the evidence, if its sender signed it, for the
  // rest of the group (unit_evidence.hpp). False after failing.
  bool accept_chunk(std::size_t from, std::size_t segment, std::size_t k, StatementKind kind,
                    const secure::Signature& signature, std::span<const std::byte> encoded,
                    std::span<float> out);
  // The unit of the encoded update that chunk k of segment g is.
  std::size_t unit_index(std::size_t segment, std::size_t k) const;
  void on_statement(std::size_t from, std::uint32_t what, std::span<const std::byte> payload);
  void finish_chunk(std::size_t segment, std::size_t k);
  // Checked owners: the next step once a piece is in.
  void contribution_signed(std::size_t segment, std::size_t from, const Statement& s);
  void compare_inputs();
  void sign_owned();
  void sign_result(std::size_t segment);
  void settle(std::size_t segment);
  SegmentSum& sum_of(std::size_t segment);
  Statement sign(StatementKind kind, std::size_t segment, const Digest& digest) const;
  void send_statement(const PeerKey& to, const Statement& s);

  std::span<const float> to_encode_;           // built from fp32 values: them, until start()
  std::optional<EncodedUpdate> own_encoding_;  // ... and their encoding
  const EncodedUpdate* update_ = nullptr;
  // The result: the mean's chunks as encoded (no fp32 result), or decoded into result_.
  std::span<float> result_;
  std::vector<std::vector<std::byte>> mean_;
  void keep_mean(const Chunk& c, std::span<const std::byte> bytes);
  // The unit of the encoded update that is chunk k of segment g, and its signature.
  std::span<const std::byte> unit_of(std::size_t segment, std::size_t k) const;
  const secure::Signature& signature_of(std::size_t segment, std::size_t k) const;

  std::optional<SegmentSum> owned_, checked_;
  std::vector<float> result_chunk_;  // a chunk's mean before it is encoded
  SegmentDigest owned_result_, checked_result_;
  std::vector<SegmentDigest> sent_;               // per segment: the chunks this member sent to it
  std::vector<std::optional<Statement>> inputs_;  // the checked segment's contribution statements
  std::vector<std::optional<Statement>> owners_;  // ... as its owner took them (its list)
  std::vector<std::optional<Statement>> own_inputs_;  // the owned segment's, for the checker
  bool owner_list_in_ = false, inputs_agree_ = false, checked_signed_ = false;
  std::vector<SegmentCheck> checks_;
  std::size_t owned_chunks_done_ = 0, checked_chunks_done_ = 0;
  std::vector<std::size_t> next_gather_;
  std::size_t gathered_ = 0;
  std::size_t expected_gathers_ = 0;
  std::size_t settled_ = 0;
};

}  // namespace loco::proto
