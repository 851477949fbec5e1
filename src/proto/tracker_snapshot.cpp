#include "loco/proto/tracker_snapshot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

constexpr std::string_view kMagic = "loco-tracker-state";
// Format 2 added the lost rounds, format 3 the keys held against, format 4 the members; older
// files are still read.
constexpr std::uint8_t kVersion = 4;
constexpr std::uint8_t kOldestVersion = 1;
constexpr std::size_t kRecordBytes = 8 + 8 + 4 + 4 + 32;
constexpr std::size_t kLostBytes = 4 * 8;
constexpr std::size_t kSavedKeyBytes = 32;

// The newest `max` of `items` (the core keeps no more; a caller's longer list is cut here).
template <typename T, typename Write>
void write_list(ByteWriter& w, const std::vector<T>& items, std::size_t max, Write write_one) {
  const std::size_t keep = std::min(items.size(), max);
  w.u32(static_cast<std::uint32_t>(keep));
  for (std::size_t i = items.size() - keep; i < items.size(); ++i) write_one(items[i]);
}

template <typename T, typename Read>
std::vector<T> read_list(ByteReader& r, std::size_t max, std::size_t bytes_each, Read read_one) {
  const std::size_t n = r.count(max, bytes_each);
  std::vector<T> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(read_one());
  return out;
}

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
  LOCO_ASSERT(s.run_id.size() <= kMaxTextBytes, "a run id the reader would refuse");
  w.string(s.run_id);
  w.bytes(s.settings_digest);
  w.boolean(s.genesis.has_value());
  w.bytes(s.genesis.value_or(Digest{}));
  w.u64(s.epoch);
  w.u64(s.committed_round);
  w.bytes(s.committed_hash);
  write_list(w, s.history, TrackerSnapshot::kMaxHistory,
             [&](const RoundRecord& r) { record(w, r); });
  write_list(w, s.lost_rounds, TrackerSnapshot::kMaxLostRounds, [&](const LostRounds& l) {
    w.u64(l.first);
    w.u64(l.last);
    w.u64(l.went_back_to);
    w.u64(l.unix_ms);
  });
  constexpr std::size_t kHeld = TrackerSnapshot::kMaxHeldAgainst;
  write_list(w, s.barred, kHeld, [&](const BarredKey& b) {
    w.bytes(b.key.bytes);
    w.u64(b.remaining_ms);
  });
  write_list(w, s.benched, kHeld, [&](const BenchedKey& b) {
    w.bytes(b.key.bytes);
    w.u64(b.until);
    w.u32(b.times);
  });
  write_list(w, s.disputes, kHeld, [&](const DisputedPair& d) {
    w.bytes(d.first.bytes);
    w.bytes(d.second.bytes);
  });
  write_list(w, s.members, kMaxMembers, [&](const PeerKey& k) { w.bytes(k.bytes); });
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
  if (bytes.size() > kMaxSnapshotBytes)
    r.fail(fmt::format("{} bytes, more than any state ({})", bytes.size(), kMaxSnapshotBytes));
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
  s.history = read_list<RoundRecord>(fields, TrackerSnapshot::kMaxHistory, kRecordBytes,
                                     [&] { return record(fields); });
  if (version >= 2) {
    s.lost_rounds = read_list<LostRounds>(fields, TrackerSnapshot::kMaxLostRounds, kLostBytes, [&] {
      LostRounds l;
      l.first = fields.u64();
      l.last = fields.u64();
      l.went_back_to = fields.u64();
      l.unix_ms = fields.u64();
      return l;
    });
  }
  if (version >= 3) {
    constexpr std::size_t kHeld = TrackerSnapshot::kMaxHeldAgainst;
    s.barred = read_list<BarredKey>(fields, kHeld, kSavedKeyBytes + 8, [&] {
      BarredKey b;
      fields.bytes(b.key.bytes);
      b.remaining_ms = fields.u64();
      return b;
    });
    s.benched = read_list<BenchedKey>(fields, kHeld, kSavedKeyBytes + 8 + 4, [&] {
      BenchedKey b;
      fields.bytes(b.key.bytes);
      b.until = fields.u64();
      b.times = fields.u32();
      return b;
    });
    s.disputes = read_list<DisputedPair>(fields, kHeld, 2 * kSavedKeyBytes, [&] {
      DisputedPair d;
      fields.bytes(d.first.bytes);
      fields.bytes(d.second.bytes);
      return d;
    });
  }
  if (version >= 4)
    s.members = read_list<PeerKey>(fields, kMaxMembers, kSavedKeyBytes, [&] {
      PeerKey k{};
      fields.bytes(k.bytes);
      return k;
    });
  fields.expect_end();
  return s;
}

}  // namespace loco::proto
