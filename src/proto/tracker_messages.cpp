#include "loco/proto/tracker_messages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"

namespace loco::proto {
namespace {

constexpr std::size_t kKeyBytes = 32;
// key, empty address, shard, bps, first round, reachability
constexpr std::size_t kMinMemberBytes = kKeyBytes + 4 + 4 + 8 + 8 + 1;
constexpr std::size_t kMinDonorBytes = kKeyBytes + 4;

void key(ByteWriter& w, const secure::PublicKey& k) {
  w.bytes(k.bytes);
}
secure::PublicKey key(ByteReader& r) {
  secure::PublicKey k;
  r.bytes(k.bytes);
  return k;
}
Digest digest(ByteReader& r) {
  Digest d{};
  r.bytes(d);
  return d;
}

void member(ByteWriter& w, const Member& m) {
  key(w, m.key);
  write_text(w, m.address, kMaxAddressBytes);
  w.u32(m.shard);
  w.u64(m.upload_bps);
  w.u64(m.first_round);
  w.u8(static_cast<std::uint8_t>(m.reachability));
}
Member member(ByteReader& r) {
  Member m;
  m.key = key(r);
  m.address = read_text(r, kMaxAddressBytes);
  m.shard = r.u32();
  m.upload_bps = r.u64();
  m.first_round = r.u64();
  const std::uint8_t reach = r.u8();
  if (reach > static_cast<std::uint8_t>(Reachability::unreachable))
    r.fail(fmt::format("unknown reachability {}", reach));
  m.reachability = static_cast<Reachability>(reach);
  return m;
}

void view_body(ByteWriter& w, const View& v) {
  LOCO_ASSERT(v.members.size() <= kMaxMembers, "a view lists at most kMaxMembers");
  w.u64(v.epoch);
  w.u32(static_cast<std::uint32_t>(v.members.size()));
  for (const Member& m : v.members) member(w, m);
}
// Strictly increasing: lookups are binary searches, applying a delta is one merge, and no key
// comes twice.
template <typename Keys>
bool strictly_increasing(const Keys& keys) {
  return std::adjacent_find(keys.begin(), keys.end(),
                            [](const auto& a, const auto& b) { return !(a < b); }) == keys.end();
}

std::vector<secure::PublicKey> keys_of(const std::vector<Member>& members) {
  std::vector<secure::PublicKey> keys;
  keys.reserve(members.size());
  for (const Member& m : members) keys.push_back(m.key);
  return keys;
}

View view_body(ByteReader& r) {
  View v;
  v.epoch = r.u64();
  const std::size_t n = r.count(kMaxMembers, kMinMemberBytes);
  v.members.reserve(n);
  for (std::size_t i = 0; i < n; ++i) v.members.push_back(member(r));
  if (!strictly_increasing(keys_of(v.members)))
    r.fail("members not in strictly increasing key order");
  return v;
}

// What the tracker's signature covers: a domain label (one per message type), the run id, the
// message's fields.
std::vector<std::byte> signed_bytes(std::string_view label, std::span<const std::byte> body,
                                    std::string_view run_id) {
  ByteWriter w;
  w.string(label);
  w.string(run_id);
  w.bytes(body);
  return w.finish();
}

constexpr std::string_view kViewLabel = "loco view v3";
constexpr std::string_view kViewDeltaLabel = "loco view delta v3";

}  // namespace

std::string_view reachability_name(Reachability r) {
  switch (r) {
    case Reachability::reachable: return "reachable";
    case Reachability::unreachable: return "unreachable";
    case Reachability::unmeasured: break;
  }
  return "not measured yet";
}

std::vector<std::byte> encode(const JoinRequest& m) {
  LOCO_ASSERT(m.settings.size() <= kMaxSettings, "too many settings to encode");
  ByteWriter w = start_message(m.kType);
  write_text(w, m.software, kMaxSettingNameBytes);
  write_text(w, m.listen_address, kMaxAddressBytes);
  w.u64(m.upload_bps);
  write_text(w, m.credential, kMaxTextBytes);
  w.u32(static_cast<std::uint32_t>(m.settings.size()));
  for (const Setting& s : m.settings) {
    write_text(w, s.name, kMaxSettingNameBytes);
    write_text(w, s.value, kMaxTextBytes);
  }
  w.bytes(m.genesis);
  w.u64(m.state_round);
  w.bytes(m.state_hash);
  w.u32(m.relay_pairs);
  return w.finish();
}

template <>
JoinRequest decode<JoinRequest>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, JoinRequest::kType);
  JoinRequest m;
  m.software = read_text(r, kMaxSettingNameBytes);
  m.listen_address = read_text(r, kMaxAddressBytes);
  m.upload_bps = r.u64();
  m.credential = read_text(r, kMaxTextBytes);
  const std::size_t n = r.count(kMaxSettings, 8);
  m.settings.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Setting s;
    s.name = read_text(r, kMaxSettingNameBytes);
    s.value = read_text(r, kMaxTextBytes);
    m.settings.push_back(std::move(s));
  }
  m.genesis = digest(r);
  m.state_round = r.u64();
  m.state_hash = digest(r);
  m.relay_pairs = r.u32();
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const JoinReply& m) {
  ByteWriter w = start_message(m.kType);
  w.boolean(m.accepted);
  write_text(w, m.refusal, kMaxTextBytes);
  w.u32(m.shard_index);
  w.u32(m.shard_count);
  w.u32(m.heartbeat_ms);
  w.u32(m.eviction_ms);
  w.u64(m.committed_round);
  w.bytes(m.committed_hash);
  w.u64(m.final_round);
  return w.finish();
}

template <>
JoinReply decode<JoinReply>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, JoinReply::kType);
  JoinReply m;
  m.accepted = r.boolean();
  m.refusal = read_text(r, kMaxTextBytes);
  m.shard_index = r.u32();
  m.shard_count = r.u32();
  m.heartbeat_ms = r.u32();
  m.eviction_ms = r.u32();
  m.committed_round = r.u64();
  m.committed_hash = digest(r);
  m.final_round = r.u64();
  r.expect_end();
  if (m.accepted && (m.shard_count == 0 || m.shard_index >= m.shard_count))
    r.fail(fmt::format("shard {} of {}", m.shard_index, m.shard_count));
  return m;
}

std::vector<std::byte> encode(const Heartbeat& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.state_round);
  w.u64(m.inner_step);
  w.f32(m.loss);
  w.f32(m.tokens_per_s);
  w.u64(m.bytes_sent);
  w.u64(m.bytes_received);
  w.f32(m.network_wait_s);
  w.u64(m.bytes_relayed);
  w.u8(m.sketch ? 1 : 0);
  if (m.sketch)
    for (const float v : *m.sketch) w.f32(v);
  return w.finish();
}

template <>
Heartbeat decode<Heartbeat>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Heartbeat::kType);
  Heartbeat m;
  m.state_round = r.u64();
  m.inner_step = r.u64();
  m.loss = r.f32();
  m.tokens_per_s = r.f32();
  m.bytes_sent = r.u64();
  m.bytes_received = r.u64();
  m.network_wait_s = r.f32();
  m.bytes_relayed = r.u64();
  const std::uint8_t has_sketch = r.u8();
  if (has_sketch > 1) r.fail(fmt::format("sketch flag {}", has_sketch));
  if (has_sketch == 1) {
    ParameterSketch& s = m.sketch.emplace();
    for (float& v : s) v = r.f32();
  }
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const HeartbeatAck& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.epoch);
  w.u64(m.next_round);
  return w.finish();
}

template <>
HeartbeatAck decode<HeartbeatAck>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, HeartbeatAck::kType);
  HeartbeatAck m;
  m.epoch = r.u64();
  m.next_round = r.u64();
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const Leave& m) {
  ByteWriter w = start_message(m.kType);
  write_text(w, m.reason, kMaxTextBytes);
  return w.finish();
}

template <>
Leave decode<Leave>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Leave::kType);
  Leave m;
  m.reason = read_text(r, kMaxTextBytes);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const Ready& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.f32(m.update_norm);
  w.bytes(m.base_hash);
  w.f32(m.loss);
  w.u64(m.tokens);
  w.f32(m.step_seconds);
  return w.finish();
}

template <>
Ready decode<Ready>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Ready::kType);
  Ready m;
  m.round = r.u64();
  m.update_norm = r.f32();
  m.base_hash = digest(r);
  m.loss = r.f32();
  m.tokens = r.u64();
  m.step_seconds = r.f32();
  if (!(m.step_seconds >= 0 && m.step_seconds <= kMaxStepSeconds))
    r.fail(fmt::format("a step of {} s, outside 0..{}", m.step_seconds, kMaxStepSeconds));
  r.expect_end();
  return m;
}

namespace {

// Group::phase_ms and Resync::phase_ms: at most kMaxPhaseMs.
std::uint32_t read_phase_ms(ByteReader& r) {
  const std::uint32_t ms = r.u32();
  if (ms > kMaxPhaseMs) r.fail(fmt::format("a phase of {} ms, above {}", ms, kMaxPhaseMs));
  return ms;
}

}  // namespace

std::vector<std::byte> encode(const Group& m) {
  LOCO_ASSERT(m.members.size() <= kMaxMembers, "a group has at most kMaxMembers");
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.u32(m.attempt);
  w.u64(m.epoch);
  w.u32(static_cast<std::uint32_t>(m.members.size()));
  for (const auto& k : m.members) key(w, k);
  w.f32(m.median_norm);
  w.f32(m.norm_limit);
  w.u32(m.trim);
  LOCO_ASSERT(m.tokens.empty() || m.tokens.size() == m.members.size(),
              "a group's tokens are one count per member, or none");
  w.u32(static_cast<std::uint32_t>(m.tokens.size()));
  for (const std::uint64_t t : m.tokens) w.u64(t);
  LOCO_ASSERT(m.phase_ms <= kMaxPhaseMs, "a phase of at most kMaxPhaseMs");
  w.u32(m.phase_ms);
  LOCO_ASSERT(m.relays.size() <= kMaxRelayRoutes, "a group has at most kMaxRelayRoutes relays");
  w.u32(static_cast<std::uint32_t>(m.relays.size()));
  for (const RelayRoute& route : m.relays) {
    w.u32(route.a);
    w.u32(route.b);
    w.u32(route.via);
  }
  w.boolean(m.check_owners);
  return w.finish();
}

template <>
Group decode<Group>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Group::kType);
  Group m;
  m.round = r.u64();
  m.attempt = r.u32();
  m.epoch = r.u64();
  const std::size_t n = r.count(kMaxMembers, kKeyBytes);
  m.members.reserve(n);
  for (std::size_t i = 0; i < n; ++i) m.members.push_back(key(r));
  m.median_norm = r.f32();
  m.norm_limit = r.f32();
  m.trim = r.u32();
  if (m.members.empty() || m.trim > (m.members.size() - 1) / 2)
    r.fail(fmt::format("it trims {} of {} contributions from each side", m.trim, m.members.size()));
  const std::size_t weights = r.count(kMaxMembers, sizeof(std::uint64_t));
  if (weights != 0 && weights != n)
    r.fail(fmt::format("it weighs {} of its {} members", weights, n));
  m.tokens.reserve(weights);
  for (std::size_t i = 0; i < weights; ++i) {
    m.tokens.push_back(r.u64());
    if (m.tokens.back() == 0 || m.tokens.back() > kMaxRoundTokens)
      r.fail(
          fmt::format("a member's tokens are {}, outside 1..{}", m.tokens.back(), kMaxRoundTokens));
  }
  m.phase_ms = read_phase_ms(r);
  const std::size_t routes = r.count(kMaxRelayRoutes, 3 * sizeof(std::uint32_t));
  m.relays.reserve(routes);
  for (std::size_t i = 0; i < routes; ++i) {
    const RelayRoute route{.a = r.u32(), .b = r.u32(), .via = r.u32()};
    if (route.a >= route.b || route.b >= n || route.via >= n || route.via == route.a ||
        route.via == route.b)
      r.fail(fmt::format("relay route {} ({} and {} through {}) does not fit a group of {}", i,
                         route.a, route.b, route.via, n));
    m.relays.push_back(route);
  }
  m.check_owners = r.boolean();
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const RoundDone& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.u32(m.attempt);
  w.bytes(m.state_hash);
  return w.finish();
}

template <>
RoundDone decode<RoundDone>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, RoundDone::kType);
  RoundDone m;
  m.round = r.u64();
  m.attempt = r.u32();
  m.state_hash = digest(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const RoundFailed& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.u32(m.attempt);
  write_text(w, m.reason, kMaxTextBytes);
  w.boolean(m.suspect.has_value());
  if (m.suspect) key(w, *m.suspect);
  return w.finish();
}

template <>
RoundFailed decode<RoundFailed>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, RoundFailed::kType);
  RoundFailed m;
  m.round = r.u64();
  m.attempt = r.u32();
  m.reason = read_text(r, kMaxTextBytes);
  if (r.boolean()) m.suspect = key(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const Commit& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.u32(m.attempt);
  w.bytes(m.state_hash);
  return w.finish();
}

template <>
Commit decode<Commit>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Commit::kType);
  Commit m;
  m.round = r.u64();
  m.attempt = r.u32();
  m.state_hash = digest(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const AbortRound& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.u32(m.attempt);
  write_text(w, m.reason, kMaxTextBytes);
  w.boolean(m.retry);
  return w.finish();
}

template <>
AbortRound decode<AbortRound>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, AbortRound::kType);
  AbortRound m;
  m.round = r.u64();
  m.attempt = r.u32();
  m.reason = read_text(r, kMaxTextBytes);
  m.retry = r.boolean();
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const Resync& m) {
  LOCO_ASSERT(m.donors.size() <= kMaxDonors, "a resync names at most kMaxDonors donors");
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.bytes(m.state_hash);
  w.u32(static_cast<std::uint32_t>(m.donors.size()));
  for (const Donor& d : m.donors) {
    key(w, d.key);
    write_text(w, d.address, kMaxAddressBytes);
  }
  LOCO_ASSERT(m.phase_ms <= kMaxPhaseMs, "a phase of at most kMaxPhaseMs");
  w.u32(m.phase_ms);
  return w.finish();
}

template <>
Resync decode<Resync>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, Resync::kType);
  Resync m;
  m.round = r.u64();
  m.state_hash = digest(r);
  const std::size_t n = r.count(kMaxDonors, kMinDonorBytes);
  m.donors.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Donor d;
    d.key = key(r);
    d.address = read_text(r, kMaxAddressBytes);
    m.donors.push_back(std::move(d));
  }
  m.phase_ms = read_phase_ms(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const StateReport& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.bytes(m.state_hash);
  return w.finish();
}

template <>
StateReport decode<StateReport>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, StateReport::kType);
  StateReport m;
  m.round = r.u64();
  m.state_hash = digest(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const RunEnded& m) {
  ByteWriter w = start_message(m.kType);
  w.u64(m.round);
  w.bytes(m.state_hash);
  w.boolean(m.kept);
  return w.finish();
}

template <>
RunEnded decode<RunEnded>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, RunEnded::kType);
  RunEnded m;
  m.round = r.u64();
  m.state_hash = digest(r);
  m.kept = r.boolean();
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const ProvenMisconduct& m) {
  ByteWriter w = start_message(m.kType);
  write_statement(w, m.proof.first);
  write_statement(w, m.proof.second);
  return w.finish();
}

template <>
ProvenMisconduct decode<ProvenMisconduct>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, ProvenMisconduct::kType);
  ProvenMisconduct m;
  m.proof.first = read_statement(r);
  m.proof.second = read_statement(r);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode(const MisbehaviourReport& m) {
  ByteWriter w = start_message(m.kType);
  key(w, m.suspect);
  write_text(w, m.reason, kMaxTextBytes);
  return w.finish();
}

template <>
MisbehaviourReport decode<MisbehaviourReport>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MisbehaviourReport::kType);
  MisbehaviourReport m;
  m.suspect = key(r);
  m.reason = read_text(r, kMaxTextBytes);
  r.expect_end();
  return m;
}

namespace {

std::span<const std::uint8_t> as_u8_bytes(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

// version ‖ fields ‖ signature over signed_bytes(label, fields, run_id).
std::vector<std::byte> sign(MessageType type, std::string_view label,
                            std::span<const std::byte> fields, const secure::KeyPair& tracker,
                            std::string_view run_id) {
  const secure::Signature signature =
      tracker.sign(as_u8_bytes(signed_bytes(label, fields, run_id)));
  ByteWriter w = start_message(type);
  w.bytes(fields);
  w.bytes(signature);
  return w.finish();
}

// The fields of a signed message, once its signature verifies (Error(crypto) otherwise).
std::span<const std::byte> open_signed(std::span<const std::byte> body, MessageType type,
                                       std::string_view label, const secure::PublicKey& tracker,
                                       std::string_view run_id, secure::SignatureMemo* memo) {
  ByteReader r = open_message(body, type);
  const std::span<const std::byte> rest = r.rest();
  secure::Signature signature{};
  if (rest.size() < signature.size()) r.fail("no room for its signature");
  const auto fields = rest.first(rest.size() - signature.size());
  std::memcpy(signature.data(), rest.data() + fields.size(), signature.size());
  const std::vector<std::byte> signed_message = signed_bytes(label, fields, run_id);
  const bool verifies = memo ? memo->verify(tracker, as_u8_bytes(signed_message), signature)
                             : secure::verify(tracker, as_u8_bytes(signed_message), signature);
  if (!verifies)
    throw Error(ErrorCategory::crypto,
                fmt::format("a {} whose signature does not verify under the pinned tracker key "
                            "for this run: forged, altered, or from another run",
                            info(type).name));
  return fields;
}

}  // namespace

std::vector<std::byte> encode_signed_view(const View& view, const secure::KeyPair& tracker,
                                          std::string_view run_id) {
  ByteWriter body;
  view_body(body, view);
  return sign(View::kType, kViewLabel, body.finish(), tracker, run_id);
}

View open_signed_view(std::span<const std::byte> body, const secure::PublicKey& tracker,
                      std::string_view run_id, secure::SignatureMemo* memo) {
  ByteReader fields(open_signed(body, View::kType, kViewLabel, tracker, run_id, memo),
                    info(View::kType).name);
  View view = view_body(fields);
  fields.expect_end();
  return view;
}

std::vector<std::byte> encode_signed_view_delta(const ViewDelta& delta,
                                                const secure::KeyPair& tracker,
                                                std::string_view run_id) {
  LOCO_ASSERT(delta.removed.size() <= kMaxMembers && delta.changed.size() <= kMaxMembers,
              "a view delta lists at most kMaxMembers each way");
  ByteWriter w;
  w.u64(delta.base_epoch);
  w.u64(delta.epoch);
  w.u32(static_cast<std::uint32_t>(delta.removed.size()));
  for (const secure::PublicKey& k : delta.removed) key(w, k);
  w.u32(static_cast<std::uint32_t>(delta.changed.size()));
  for (const Member& m : delta.changed) member(w, m);
  w.u64(delta.removed_from_round);
  w.bytes(delta.members_digest);
  return sign(ViewDelta::kType, kViewDeltaLabel, w.finish(), tracker, run_id);
}

ViewDelta open_signed_view_delta(std::span<const std::byte> body, const secure::PublicKey& tracker,
                                 std::string_view run_id, secure::SignatureMemo* memo) {
  ByteReader r(open_signed(body, ViewDelta::kType, kViewDeltaLabel, tracker, run_id, memo),
               info(ViewDelta::kType).name);
  ViewDelta d;
  d.base_epoch = r.u64();
  d.epoch = r.u64();
  if (d.epoch <= d.base_epoch)
    r.fail(fmt::format("epoch {} not after its base {}", d.epoch, d.base_epoch));
  const std::size_t removed = r.count(kMaxMembers, kKeyBytes);
  d.removed.reserve(removed);
  for (std::size_t i = 0; i < removed; ++i) d.removed.push_back(key(r));
  const std::size_t changed = r.count(kMaxMembers, kMinMemberBytes);
  d.changed.reserve(changed);
  for (std::size_t i = 0; i < changed; ++i) d.changed.push_back(member(r));
  d.removed_from_round = r.u64();
  d.members_digest = digest(r);
  r.expect_end();
  if (!strictly_increasing(d.removed) || !strictly_increasing(keys_of(d.changed)))
    r.fail("members not in strictly increasing key order");
  return d;
}

std::vector<std::byte> encode(const ViewRequest& m) {
  return start_message(m.kType).finish();
}

template <>
ViewRequest decode<ViewRequest>(std::span<const std::byte> body) {
  ByteReader r = open_message(body, ViewRequest::kType);
  r.expect_end();
  return {};
}

}  // namespace loco::proto
