#include "loco/proto/unit_evidence.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::proto {
namespace {

bool is_unit_kind(StatementKind kind) {
  return kind == StatementKind::update_unit || kind == StatementKind::mean_unit;
}

// The member whose segment holds `unit` in a direct exchange of `values` values among `members`
// (segments are whole units: segment_begin with the unit as grain).
std::size_t owner_of_unit(std::size_t unit, std::size_t values, std::size_t unit_values,
                          std::size_t members) {
  std::size_t g = 0;
  while (g + 1 < members &&
         segment_begin(values, members, g + 1, unit_values) <= unit * unit_values)
    ++g;
  return g;
}

}  // namespace

Statement unit_statement(const PeerKey& signer, std::uint64_t round, std::uint32_t attempt,
                         StatementKind kind, std::uint32_t unit, std::span<const std::byte> bytes) {
  return Statement{.signer = signer,
                   .round = round,
                   .attempt = attempt,
                   .kind = kind,
                   .segment = unit,
                   .digest = blake2b(bytes),
                   .signature = {}};
}

secure::Signature sign_unit(const secure::KeyPair& signer, std::string_view run_id,
                            std::uint64_t round, std::uint32_t attempt, StatementKind kind,
                            std::uint32_t unit, std::span<const std::byte> bytes) {
  return sign_statement(signer, run_id, round, attempt, kind, unit, blake2b(bytes)).signature;
}

std::vector<std::byte> encode(const Evidence& e) {
  ByteWriter w = start_message(MessageType::evidence, 8 + 4 + 32 + 1 + 4 + 64 + e.bytes.size());
  w.u64(e.round);
  w.u32(e.attempt);
  w.bytes(e.accused.bytes);
  w.u8(static_cast<std::uint8_t>(e.kind));
  w.u32(e.unit);
  w.bytes(e.signature);
  w.bytes(e.bytes);
  return w.finish();
}

Evidence decode_evidence(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::evidence);  // the type's size limit first
  Evidence e;
  e.round = r.u64();
  e.attempt = r.u32();
  r.bytes(e.accused.bytes);
  const auto kind = static_cast<StatementKind>(r.u8());
  if (!is_unit_kind(kind))
    r.fail(fmt::format("evidence of a statement of kind {}, not a unit's", static_cast<int>(kind)));
  e.kind = kind;
  e.unit = r.u32();
  r.bytes(e.signature);
  const std::span<const std::byte> bytes = r.rest();
  e.bytes.assign(bytes.begin(), bytes.end());
  return e;
}

std::optional<std::string> what_evidence_shows(const Evidence& e, const EvidenceContext& c) {
  const std::span<const PeerKey> members = c.members;
  const auto accused = std::find(members.begin(), members.end(), e.accused);
  const std::size_t units = c.unit_values == 0 ? 0 : (c.values + c.unit_values - 1) / c.unit_values;
  if (e.round != c.round || e.attempt != c.attempt || accused == members.end() || e.unit >= units ||
      c.codec == nullptr)
    return std::nullopt;
  if (e.kind == StatementKind::mean_unit &&
      owner_of_unit(e.unit, c.values, c.unit_values, members.size()) !=
          static_cast<std::size_t>(accused - members.begin()))
    return std::nullopt;  // only a segment's owner sends its mean
  Statement s =
      unit_statement(e.accused, e.round, e.kind == StatementKind::mean_unit ? e.attempt : 0, e.kind,
                     e.unit, e.bytes);
  s.signature = e.signature;
  if (!verify_statement(c.run_id, s)) return std::nullopt;
  const std::size_t first = std::size_t{e.unit} * c.unit_values;
  std::vector<float> values(std::min(c.unit_values, c.values - first));
  const std::string what = fmt::format(
      "{} signed {} {} of round {}", secure::short_id(e.accused),
      e.kind == StatementKind::mean_unit ? "the mean of unit" : "unit", e.unit, e.round);
  try {
    c.codec->decode(e.bytes, values);
  } catch (const Error& error) {
    return fmt::format("{}, which does not decode: {}", what, error.message());
  }
  const std::optional<std::string> wrong = out_of_bounds(values, 1, c.norm_limit, c.median_norm);
  if (!wrong) return std::nullopt;
  return fmt::format("{}: {}", what, *wrong);
}

}  // namespace loco::proto
