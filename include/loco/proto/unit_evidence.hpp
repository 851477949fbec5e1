#pragma once
// Evidence a member shows the rest of its group when a chunk it received is one no honest member
// sends (docs/SECURITY.md, "Members lie"). Sans-I/O.
//
// Why: a chunk of the direct exchange reaches one owner (and its checker). An owner that finds a
// contribution out of bounds names its sender, and the tracker stops the attempt at once; the
// tracker cannot tell a poisoner from a lying accuser unless most of the group names the same
// member. The other owners may not have received the poisoner's chunks yet when the abort comes
// (or were sent honest ones: a poisoner may spoil one owner's segment only), so an honest
// accuser's word stood alone and, said again, benched it with the poisoner.
//
// So every chunk a member sends is signed: its update's units once a round (StatementKind::
// update_unit: round and unit index, no attempt, since a retry sends the same bytes,
// encoded_update.hpp), an owner's mean chunks once an attempt (mean_unit: round, attempt and unit
// index). The signature rides in the chunk's header (all_reduce.hpp). A member that finds a signed
// chunk out of bounds sends its group the chunk with its sender's signature (`evidence`); each
// checks it alone (the signature binds the bytes to the accused, the bounds are the attempt's) and,
// if it holds, names the accused too: a majority then names it, and it alone sits the retry out.
// A chunk whose signature does not verify is refused all the same, but shows nothing to others:
// it is one member's word again, as a chunk that never came is.
//
// Cost: the sender hashes (BLAKE2b) and signs each unit of its update once a round (on the
// encoding threads) and each mean chunk it owns once an attempt: S·c bytes hashed and S/U
// signatures for the update, S·c/N and S/(U·N) more for the mean (S values, c bytes a value, U
// values a unit, N members). At 85M values (int8, 1,303 units) the update's take 0.13 s on one
// core of this machine, twice its encode (bench/run.sh update-encoding, docs/SCALE.md); 64 bytes a
// chunk message. A receiver hashes and verifies only a chunk it refuses.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/compress/codec.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/owner_check.hpp"

namespace loco::proto {

// The statement a unit's signature is over: the signer's unit `unit` of round `round` (attempt 0
// for an update's unit, whose bytes every attempt of the round sends) with digest BLAKE2b(bytes).
Statement unit_statement(const PeerKey& signer, std::uint64_t round, std::uint32_t attempt,
                         StatementKind kind, std::uint32_t unit, std::span<const std::byte> bytes);
secure::Signature sign_unit(const secure::KeyPair& signer, std::string_view run_id,
                            std::uint64_t round, std::uint32_t attempt, StatementKind kind,
                            std::uint32_t unit, std::span<const std::byte> bytes);

struct Evidence {
  static constexpr MessageType kType = MessageType::evidence;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;  // the attempt the chunk came in
  PeerKey accused{};
  StatementKind kind = StatementKind::update_unit;
  std::uint32_t unit = 0;  // the unit of the update the chunk holds (all_reduce.hpp)
  secure::Signature signature{};
  std::vector<std::byte> bytes;  // the chunk, as the codec encoded it
};
std::vector<std::byte> encode(const Evidence& e);
// Error(format) for a malformed message or a kind that is not a unit's; the signature is not
// checked here.
Evidence decode_evidence(std::span<const std::byte> body);

// What a member knows of the attempt the evidence is about.
struct EvidenceContext {
  std::string_view run_id;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::span<const PeerKey> members;  // the attempt's group, in the tracker's order
  std::size_t values = 0;            // the update's
  std::size_t unit_values = 0;       // the direct exchange's chunk (direct_chunk_values)
  const compress::Codec* codec = nullptr;
  float median_norm = 0;  // the attempt's bounds (AllReduceConfig)
  float norm_limit = 0;
};

// Why `e` shows its accused sent a chunk no honest member sends, or nothing when it shows nothing:
// another round or attempt, an accused outside the group (or, for a mean chunk, not the owner of
// the unit's segment), bytes the accused did not sign, or values within bounds.
std::optional<std::string> what_evidence_shows(const Evidence& e, const EvidenceContext& context);

}  // namespace loco::proto
