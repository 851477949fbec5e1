#include "loco/proto/tracker_snapshot.hpp"

#include <fmt/format.h>

#include <cstring>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

constexpr std::string_view kMagic = "loco-tracker-state";
// Format 2 added the lost rounds; format 1 files (no lost rounds) are still read.
constexpr std::uint8_t kVersion = 2;
constexpr std::uint8_t kOldestVersion = 1;
constexpr std::size_t kRecordBytes = 8 + 8 + 4 + 4 + 32;
constexpr std::size_t kLostBytes = 4 * 8;

void record(ByteWriter& w, const RoundRecord& r) {
  w.u64(r.round);
  w.u64(r.unix_ms);
  w.u32(r.group_size);
  w.f32(r.mean_loss);
  w.bytes(r.state_hash);
}

RoundRecord record(ByteReader& r) {
  RoundRecord out;
  out.round = r.u64();
  out.unix_ms = r.u64();
  out.group_size = r.u32();
  out.mean_loss = r.f32();
  r.bytes(out.state_hash);
  return out;
}

}  // namespace

Digest settings_digest(const std::vector<Setting>& settings) {
  ByteWriter w;
  for (const Setting& s : settings) {
    w.string(s.name);
    w.string(s.value);
  }
  const auto bytes = w.finish();
  return blake2b(bytes);
}

std::vector<std::byte> encode(const TrackerSnapshot& s) {
  ByteWriter w;
  w.raw(kMagic.data(), kMagic.size());
  w.u8(kVersion);
  w.string(s.run_id);
  w.bytes(s.settings_digest);
  w.boolean(s.genesis.has_value());
  w.bytes(s.genesis.value_or(Digest{}));
  w.u64(s.epoch);
  w.u64(s.committed_round);
  w.bytes(s.committed_hash);
  const std::size_t keep = std::min(s.history.size(), TrackerSnapshot::kMaxHistory);
  w.u32(static_cast<std::uint32_t>(keep));
  for (std::size_t i = s.history.size() - keep; i < s.history.size(); ++i) record(w, s.history[i]);
  const std::size_t lost = std::min(s.lost_rounds.size(), TrackerSnapshot::kMaxLostRounds);
  w.u32(static_cast<std::uint32_t>(lost));
  for (std::size_t i = s.lost_rounds.size() - lost; i < s.lost_rounds.size(); ++i) {
    const LostRounds& l = s.lost_rounds[i];
    w.u64(l.first);
    w.u64(l.last);
    w.u64(l.went_back_to);
    w.u64(l.unix_ms);
  }
  std::vector<std::byte> out = w.finish();
  const Digest check = blake2b(std::span<const std::byte>(out));
  const auto* p = reinterpret_cast<const std::byte*>(check.data());
  out.insert(out.end(), p, p + check.size());
  return out;
}

TrackerSnapshot decode_snapshot(std::span<const std::byte> bytes, std::string_view name) {
  const std::string what = fmt::format("tracker state file {}", name);
  ByteReader r(bytes, what,
               " (the file is damaged or not a loco-tracker state file; move it away to start a "
               "new run)");
  if (bytes.size() < kMagic.size() + 1 + 32 ||
      std::memcmp(r.take(kMagic.size()), kMagic.data(), kMagic.size()) != 0)
    r.fail("it does not start with loco-tracker-state");
  const std::uint8_t version = r.u8();
  if (version < kOldestVersion || version > kVersion)
    r.fail(fmt::format("format version {}, this build reads {} to {}", version, kOldestVersion,
                       kVersion));
  const Digest expected = blake2b(bytes.first(bytes.size() - 32));
  Digest stored{};
  std::memcpy(stored.data(), bytes.data() + bytes.size() - 32, 32);
  if (stored != expected) r.fail("its checksum does not match its contents");
  ByteReader fields(bytes.first(bytes.size() - 32).subspan(kMagic.size() + 1), what);
  TrackerSnapshot s;
  s.run_id = fields.string(kMaxTextBytes);
  fields.bytes(s.settings_digest);
  const bool has_genesis = fields.boolean();
  Digest genesis{};
  fields.bytes(genesis);
  if (has_genesis) s.genesis = genesis;
  s.epoch = fields.u64();
  s.committed_round = fields.u64();
  fields.bytes(s.committed_hash);
  const std::size_t n = fields.count(TrackerSnapshot::kMaxHistory, kRecordBytes);
  s.history.reserve(n);
  for (std::size_t i = 0; i < n; ++i) s.history.push_back(record(fields));
  if (version >= 2) {
    const std::size_t lost = fields.count(TrackerSnapshot::kMaxLostRounds, kLostBytes);
    s.lost_rounds.reserve(lost);
    for (std::size_t i = 0; i < lost; ++i) {
      LostRounds& l = s.lost_rounds.emplace_back();
      l.first = fields.u64();
      l.last = fields.u64();
      l.went_back_to = fields.u64();
      l.unix_ms = fields.u64();
    }
  }
  fields.expect_end();
  return s;
}

}  // namespace loco::proto
