#include "loco/proto/owner_check.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

// What is signed: a domain tag, so that no other signed message of loco's can pass for one.
std::vector<std::uint8_t> signed_bytes(std::string_view run_id, std::uint64_t round,
                                       std::uint32_t attempt, StatementKind kind,
                                       std::uint32_t segment, const Digest& digest) {
  ByteWriter w;
  w.string("loco checked-owner statement v1");
  w.string(run_id);
  w.u64(round);
  w.u32(attempt);
  w.u8(static_cast<std::uint8_t>(kind));
  w.u32(segment);
  w.bytes(digest);
  const std::vector<std::byte> bytes = w.finish();
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  return {p, p + bytes.size()};
}

}  // namespace

Statement sign_statement(const secure::KeyPair& signer, std::string_view run_id,
                         std::uint64_t round, std::uint32_t attempt, StatementKind kind,
                         std::uint32_t segment, const Digest& digest) {
  Statement s{.signer = signer.public_key(),
              .round = round,
              .attempt = attempt,
              .kind = kind,
              .segment = segment,
              .digest = digest,
              .signature = {}};
  s.signature = signer.sign(signed_bytes(run_id, round, attempt, kind, segment, digest));
  return s;
}

bool verify_statement(std::string_view run_id, const Statement& s) {
  return secure::verify(
      s.signer, signed_bytes(run_id, s.round, s.attempt, s.kind, s.segment, s.digest), s.signature);
}

void write_statement(ByteWriter& w, const Statement& s) {
  w.bytes(s.signer.bytes);
  w.u64(s.round);
  w.u32(s.attempt);
  w.u8(static_cast<std::uint8_t>(s.kind));
  w.u32(s.segment);
  w.bytes(s.digest);
  w.bytes(s.signature);
}

Statement read_statement(ByteReader& r) {
  Statement s;
  r.bytes(s.signer.bytes);
  s.round = r.u64();
  s.attempt = r.u32();
  const std::uint8_t kind = r.u8();
  if (kind > static_cast<std::uint8_t>(StatementKind::verdict))
    r.fail(fmt::format("statement kind {} does not exist", kind));
  s.kind = static_cast<StatementKind>(kind);
  s.segment = r.u32();
  r.bytes(s.digest);
  r.bytes(s.signature);
  return s;
}

std::set<PeerKey> proven_at_fault(std::string_view run_id, const MisconductProof& proof,
                                  std::span<const PeerKey> members) {
  const Statement& a = proof.first;
  const Statement& b = proof.second;
  const bool same_claim = a.round == b.round && a.attempt == b.attempt && a.kind == b.kind &&
                          a.segment == b.segment && a.digest != b.digest;
  const bool checked_owners =
      a.kind == StatementKind::contribution || a.kind == StatementKind::result;
  if (!same_claim || !checked_owners || a.segment >= members.size() ||
      !verify_statement(run_id, a) || !verify_statement(run_id, b))
    return {};
  const auto in_group = [&](const PeerKey& k) {
    return std::find(members.begin(), members.end(), k) != members.end();
  };
  if (a.kind == StatementKind::contribution) {
    if (a.signer != b.signer || !in_group(a.signer)) return {};
    return {a.signer};
  }
  const PeerKey& owner = members[a.segment];
  const PeerKey& checker = members[checker_of(a.segment, members.size())];
  const bool owner_and_checker =
      (a.signer == owner && b.signer == checker) || (a.signer == checker && b.signer == owner);
  if (!owner_and_checker || owner == checker) return {};
  return {owner, checker};
}

}  // namespace loco::proto
