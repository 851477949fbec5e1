#include "loco/proto/tracker_messages.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/tracker_message_fields.hpp"

namespace loco::proto {
namespace {

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

namespace {

// The rules across a message's fields, checked once its fields are read; a message without one
// takes this.
void check(ByteReader&, const auto&) {}

void check(ByteReader& r, const JoinReply& m) {
  if (m.accepted && (m.shard_count == 0 || m.shard_index >= m.shard_count))
    r.fail(fmt::format("shard {} of {}", m.shard_index, m.shard_count));
}

void check(ByteReader& r, const Ready& m) {
  if (!(m.step_seconds >= 0 && m.step_seconds <= kMaxStepSeconds))
    r.fail(fmt::format("a step of {} s, outside 0..{}", m.step_seconds, kMaxStepSeconds));
}

void check(ByteReader& r, const Group& m) {
  const std::size_t n = m.members.size();
  if (n == 0 || m.trim > (n - 1) / 2)
    r.fail(fmt::format("it trims {} of {} contributions from each side", m.trim, n));
  if (!m.tokens.empty() && m.tokens.size() != n)
    r.fail(fmt::format("it weighs {} of its {} members", m.tokens.size(), n));
  for (std::size_t i = 0; i < m.relays.size(); ++i) {
    const RelayRoute& route = m.relays[i];
    if (route.a >= route.b || route.b >= n || route.via >= n || route.via == route.a ||
        route.via == route.b)
      r.fail(fmt::format("relay route {} ({} and {} through {}) does not fit a group of {}", i,
                         route.a, route.b, route.via, n));
  }
}

void check(ByteReader& r, const View& v) {
  if (!strictly_increasing(keys_of(v.members)))
    r.fail("members not in strictly increasing key order");
}

void check(ByteReader& r, const ViewDelta& d) {
  if (d.epoch <= d.base_epoch)
    r.fail(fmt::format("epoch {} not after its base {}", d.epoch, d.base_epoch));
  if (!strictly_increasing(d.removed) || !strictly_increasing(keys_of(d.changed)))
    r.fail("members not in strictly increasing key order");
}

// What the encoder asserts beyond each field's own bounds.
void expect_encodable(const auto&) {}

void expect_encodable(const Group& m) {
  LOCO_ASSERT(m.tokens.empty() || m.tokens.size() == m.members.size(),
              "a group's tokens are one count per member, or none");
}

// A message's fields to their end, with its rules checked.
template <typename M>
M read_message(ByteReader& r) {
  M m;
  wire::read_fields(r, m);
  r.expect_end();
  check(r, m);
  return m;
}

}  // namespace

template <typename M>
std::vector<std::byte> TrackerCodec<M>::encode(const M& m) {
  expect_encodable(m);
  ByteWriter w = start_message(M::kType);
  wire::write_fields(w, m);
  return w.finish();
}

template <typename M>
M TrackerCodec<M>::decode(std::span<const std::byte> body) {
  ByteReader r = open_message(body, M::kType);
  return read_message<M>(r);
}

// One codec for each of TrackerMessages.
template struct TrackerCodec<JoinRequest>;
template struct TrackerCodec<Heartbeat>;
template struct TrackerCodec<Leave>;
template struct TrackerCodec<Ready>;
template struct TrackerCodec<RoundDone>;
template struct TrackerCodec<RoundFailed>;
template struct TrackerCodec<StateReport>;
template struct TrackerCodec<MisbehaviourReport>;
template struct TrackerCodec<ViewRequest>;
template struct TrackerCodec<ProvenMisconduct>;
template struct TrackerCodec<JoinReply>;
template struct TrackerCodec<HeartbeatAck>;
template struct TrackerCodec<Group>;
template struct TrackerCodec<Commit>;
template struct TrackerCodec<AbortRound>;
template struct TrackerCodec<Resync>;
template struct TrackerCodec<RunEnded>;

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

// The fields of a signed message M, written and then signed.
template <typename M>
std::vector<std::byte> encode_signed(std::string_view label, const M& m,
                                     const secure::KeyPair& tracker, std::string_view run_id) {
  ByteWriter fields;
  wire::write_fields(fields, m);
  return sign(M::kType, label, fields.finish(), tracker, run_id);
}

// The fields of a signed message M, once its signature verifies.
template <typename M>
M open_signed_message(std::string_view label, std::span<const std::byte> body,
                      const secure::PublicKey& tracker, std::string_view run_id,
                      secure::SignatureMemo* memo) {
  ByteReader r(open_signed(body, M::kType, label, tracker, run_id, memo), info(M::kType).name);
  return read_message<M>(r);
}

}  // namespace

std::vector<std::byte> encode_signed_view(const View& view, const secure::KeyPair& tracker,
                                          std::string_view run_id) {
  return encode_signed(kViewLabel, view, tracker, run_id);
}

View open_signed_view(std::span<const std::byte> body, const secure::PublicKey& tracker,
                      std::string_view run_id, secure::SignatureMemo* memo) {
  return open_signed_message<View>(kViewLabel, body, tracker, run_id, memo);
}

std::vector<std::byte> encode_signed_view_delta(const ViewDelta& delta,
                                                const secure::KeyPair& tracker,
                                                std::string_view run_id) {
  return encode_signed(kViewDeltaLabel, delta, tracker, run_id);
}

ViewDelta open_signed_view_delta(std::span<const std::byte> body, const secure::PublicKey& tracker,
                                 std::string_view run_id, secure::SignatureMemo* memo) {
  return open_signed_message<ViewDelta>(kViewDeltaLabel, body, tracker, run_id, memo);
}

}  // namespace loco::proto
