#pragma once
// Checked owners (docs/SECURITY.md, "A segment owner lies"): in the direct exchange with checks,
// every segment is reduced twice, by its owner and by a checker (the next member in the group's
// order), from the same contributions; both sign the digest of the result they computed, and
// every member compares the two. What each member signs, and what a member can prove to the
// tracker with what it was sent, is here.
//
// A statement is a member's signature over (run, round, attempt, kind, segment, digest):
//   contribution  the digest of the encoded chunks it sent to segment `segment`'s owner and checker
//                 (the same bytes to both)
//   result        the digest of the encoded mean of segment `segment` it computed (owner or
//   checker)
// A segment's digest is BLAKE2b over its chunks' own BLAKE2b digests, in order (SegmentDigest):
// each chunk's digest is also what its unit signature signs (unit_evidence.hpp), so a member
// hashes each chunk's bytes once a round, whatever it signs or checks with them.
// Two statements that disagree are a proof (MisconductProof) the tracker checks with the members'
// keys alone:
//   two contribution statements of one member for one segment: it sent its owner and its checker
//     different bytes (equivocation); it alone is at fault.
//   the owner's and the checker's result statements for one segment: one of the two computed a
//     wrong mean (their inputs were the same: the checker compares them first), so both sit the
//     retry out. An honest member so loses at most one retry per lying member and round.
// A member can sign anything, so a statement only binds its signer; and because the digests
// cover the round, the attempt and the run, none can be replayed into another.

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "loco/core/byte_io.hpp"
#include "loco/core/hash.hpp"
#include "loco/proto/round_formation.hpp"
#include "loco/secure/identity.hpp"

namespace loco::proto {

// contribution and result: checked owners' (above); update_unit and mean_unit: a signed chunk of
// the direct exchange (unit_evidence.hpp), evidence between members, never a proof here; verdict:
// a judge's digest of a disputed segment's mean (segment_judge.hpp).
enum class StatementKind : std::uint8_t {
  contribution = 0,
  result = 1,
  update_unit = 2,
  mean_unit = 3,
  verdict = 4
};

struct Statement {
  PeerKey signer{};
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  StatementKind kind = StatementKind::contribution;
  std::uint32_t segment = 0;
  Digest digest{};
  secure::Signature signature{};
};
constexpr std::size_t kStatementBytes = 32 + 8 + 4 + 1 + 4 + 32 + 64;

Statement sign_statement(const secure::KeyPair& signer, std::string_view run_id,
                         std::uint64_t round, std::uint32_t attempt, StatementKind kind,
                         std::uint32_t segment, const Digest& digest);
bool verify_statement(std::string_view run_id, const Statement& statement);

void write_statement(ByteWriter& w, const Statement& s);
// Error(format) for a kind that does not exist; the signature is not checked here.
Statement read_statement(ByteReader& r);

// The digest of a segment's encoded chunks, built chunk by chunk (the comment above).
class SegmentDigest {
 public:
  void add(const Digest& chunk) { hash_.update(std::as_bytes(std::span(chunk))); }
  void add_bytes(std::span<const std::byte> chunk) { add(blake2b(chunk)); }
  Digest finish() const { return Blake2b(hash_).finish(); }

 private:
  Blake2b hash_;
};

// The checker of segment g: the member after its owner g in the group's order.
inline std::size_t checker_of(std::size_t segment, std::size_t members) {
  return (segment + 1) % members;
}

// Two statements that cannot both be honest.
struct MisconductProof {
  Statement first;
  Statement second;
};

// Who `proof` shows to be at fault in the group `members` (in the group's order) of its round and
// attempt: the equivocating contributor, or the owner and checker of the segment. Nothing when it
// proves nothing: a signature that does not verify, statements of different rounds, attempts,
// kinds or segments, equal digests, or signers that are not the ones the kind needs.
std::set<PeerKey> proven_at_fault(std::string_view run_id, const MisconductProof& proof,
                                  std::span<const PeerKey> members);

}  // namespace loco::proto
