#pragma once
// The one description of each tracker message (docs/PROTOCOL.md, "Peer ↔ tracker messages"): its
// fields in wire order, each with its name, its wire type and bounds, and the message version it
// appeared in. Everything else follows from it:
// - encode() and decode<T>() (tracker_messages.cpp) write and read the fields in this order; a
//   bounded field is asserted on encode and refused on decode, and a list's count is checked
//   against its bound and against the bytes left (kMinBytes of its element) before anything is
//   reserved;
// - the tracker fuzzer (tests/fuzz/tracker_fuzz.cpp) decodes and seeds each of TrackerMessages;
// - tests/proto/tracker_messages_doc_test.cpp holds PROTOCOL.md's table of the messages to it
//   (field names, order, each wire type's name(), versions).
// Rules across fields (a group's trim below half its members, a view's keys in order, ...) are
// the decoder's own (tracker_messages.cpp). A new field is one line here, with the version that
// adds it (bump the message's in message_type.cpp), and its row in PROTOCOL.md, which the test
// prints; tests/proto/tracker_messages_golden_test.cpp pins the bytes of every message.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto::wire {

// --- Wire types: how one field's value is written and read, and the fewest bytes it takes. ---

template <typename T, void (ByteWriter::*Put)(T), T (ByteReader::*Get)(), std::size_t Bytes>
struct Scalar {
  static constexpr std::size_t kMinBytes = Bytes;
  static void write(ByteWriter& w, T v) { (w.*Put)(v); }
  static void read(ByteReader& r, T& v, std::string_view) { v = (r.*Get)(); }
};
struct U8 : Scalar<std::uint8_t, &ByteWriter::u8, &ByteReader::u8, 1> {
  static std::string name() { return "u8"; }
};
struct U32 : Scalar<std::uint32_t, &ByteWriter::u32, &ByteReader::u32, 4> {
  static std::string name() { return "u32"; }
};
struct U64 : Scalar<std::uint64_t, &ByteWriter::u64, &ByteReader::u64, 8> {
  static std::string name() { return "u64"; }
};
struct F32 : Scalar<float, &ByteWriter::f32, &ByteReader::f32, 4> {
  static std::string name() { return "f32"; }
};
// A u8 that is 0 or 1; anything else is malformed.
struct Bool : Scalar<bool, &ByteWriter::boolean, &ByteReader::boolean, 1> {
  static std::string name() { return "bool"; }
};

// A public key, 32 bytes.
struct Key {
  static constexpr std::size_t kMinBytes = 32;
  static std::string name() { return "key"; }
  static void write(ByteWriter& w, const secure::PublicKey& k) { w.bytes(k.bytes); }
  static void read(ByteReader& r, secure::PublicKey& k, std::string_view) { r.bytes(k.bytes); }
};

// A BLAKE2b-256 digest, 32 bytes.
struct Hash {
  static constexpr std::size_t kMinBytes = 32;
  static std::string name() { return "digest"; }
  static void write(ByteWriter& w, const Digest& d) { w.bytes(d); }
  static void read(ByteReader& r, Digest& d, std::string_view) { r.bytes(d); }
};

// Printable UTF-8 of at most Max bytes, after a u32 length (message_type.hpp, write_text).
template <std::size_t Max>
struct Text {
  static constexpr std::size_t kMinBytes = 4;
  static std::string name() { return "text ≤ " + std::to_string(Max); }
  static void write(ByteWriter& w, const std::string& s) { write_text(w, s, Max); }
  static void read(ByteReader& r, std::string& s, std::string_view) { s = read_text(r, Max); }
};

// An unsigned integer of wire type W in [Lo, Hi]: asserted on encode, refused on decode.
template <typename W, std::uint64_t Lo, std::uint64_t Hi>
struct Within {
  static constexpr std::size_t kMinBytes = W::kMinBytes;
  static std::string name() {
    return Lo == 0 ? W::name() + " ≤ " + std::to_string(Hi)
                   : W::name() + " in " + std::to_string(Lo) + ".." + std::to_string(Hi);
  }
  template <typename T>
  static bool fits(T v) {
    if constexpr (Lo == 0)
      return v <= Hi;
    else
      return v >= Lo && v <= Hi;
  }
  template <typename T>
  static void write(ByteWriter& w, T v) {
    LOCO_ASSERT(fits(v), "a bounded field out of its bounds");
    W::write(w, v);
  }
  template <typename T>
  static void read(ByteReader& r, T& v, std::string_view field) {
    W::read(r, v, field);
    if (!fits(v))
      r.fail(std::string(field) + " " + std::to_string(v) + " outside " + std::to_string(Lo) +
             ".." + std::to_string(Hi));
  }
};

// An enum stored as a u8, of at most Last.
template <typename E, E Last>
struct Enum {
  static constexpr std::size_t kMinBytes = 1;
  static std::string name() { return "u8 ≤ " + std::to_string(static_cast<std::uint8_t>(Last)); }
  static void write(ByteWriter& w, E v) { w.u8(static_cast<std::uint8_t>(v)); }
  static void read(ByteReader& r, E& v, std::string_view field) {
    const std::uint8_t raw = r.u8();
    if (raw > static_cast<std::uint8_t>(Last))
      r.fail("unknown " + std::string(field) + " " + std::to_string(raw));
    v = static_cast<E>(raw);
  }
};

// A u32 count of at most Max, then that many elements. Decoding checks the count against Max and
// against the bytes left (Elem::kMinBytes each) before it reserves.
template <typename Elem, std::size_t Max>
struct List {
  static constexpr std::size_t kMinBytes = 4;
  static std::string name() { return "list ≤ " + std::to_string(Max) + " of " + Elem::name(); }
  template <typename T>
  static void write(ByteWriter& w, const std::vector<T>& items) {
    LOCO_ASSERT(items.size() <= Max, "a list longer than its bound");
    w.u32(static_cast<std::uint32_t>(items.size()));
    for (const T& item : items) Elem::write(w, item);
  }
  template <typename T>
  static void read(ByteReader& r, std::vector<T>& items, std::string_view field) {
    const std::size_t n = r.count(Max, Elem::kMinBytes);
    items.reserve(n);
    for (std::size_t i = 0; i < n; ++i) Elem::read(r, items.emplace_back(), field);
  }
};

// N elements, no count (a fixed-size array).
template <typename Elem, std::size_t N>
struct Array {
  static constexpr std::size_t kMinBytes = N * Elem::kMinBytes;
  static std::string name() { return std::to_string(N) + " × " + Elem::name(); }
  template <typename T>
  static void write(ByteWriter& w, const T& items) {
    for (const auto& item : items) Elem::write(w, item);
  }
  template <typename T>
  static void read(ByteReader& r, T& items, std::string_view field) {
    for (auto& item : items) Elem::read(r, item, field);
  }
};

// A bool (u8 0 or 1), then the element when it is 1.
template <typename Elem>
struct Optional {
  static constexpr std::size_t kMinBytes = 1;
  static std::string name() { return "optional " + Elem::name(); }
  template <typename T>
  static void write(ByteWriter& w, const std::optional<T>& v) {
    w.boolean(v.has_value());
    if (v) Elem::write(w, *v);
  }
  template <typename T>
  static void read(ByteReader& r, std::optional<T>& v, std::string_view field) {
    if (r.boolean()) Elem::read(r, v.emplace(), field);
  }
};

// A signed statement of the checked owners (owner_check.hpp).
struct SignedStatement {
  static constexpr std::size_t kMinBytes = kStatementBytes;
  static std::string name() { return "statement"; }
  static void write(ByteWriter& w, const Statement& s) { write_statement(w, s); }
  static void read(ByteReader& r, Statement& s, std::string_view) { s = read_statement(r); }
};

// --- Descriptions. ---

// One field: the member it holds, its wire type, its name (as PROTOCOL.md writes it) and the
// version of its message that first carried it.
template <auto Member, typename Wire>
struct Field {
  static constexpr auto kMember = Member;
  using WireType = Wire;
  std::string_view name;
  std::uint8_t since = 1;
};

// Fields<T>::list: the fields of message or record T, in wire order (records also have kName,
// their name in the docs).
template <typename T>
struct Fields;

template <typename T>
void write_fields(ByteWriter& w, const T& m) {
  std::apply([&](auto... f) { (decltype(f)::WireType::write(w, m.*decltype(f)::kMember), ...); },
             Fields<T>::list);
}

template <typename T>
void read_fields(ByteReader& r, T& m) {
  std::apply(
      [&](auto... f) { (decltype(f)::WireType::read(r, m.*decltype(f)::kMember, f.name), ...); },
      Fields<T>::list);
}

// A described struct inside a message (a member of a view, a setting, a donor, ...).
template <typename T>
struct Record {
  static constexpr std::size_t kMinBytes = std::apply(
      [](auto... f) { return (std::size_t{0} + ... + decltype(f)::WireType::kMinBytes); },
      Fields<T>::list);
  static std::string name() { return std::string(Fields<T>::kName); }
  static void write(ByteWriter& w, const T& v) { write_fields(w, v); }
  static void read(ByteReader& r, T& v, std::string_view) { read_fields(r, v); }
};

using ReasonText = Text<kMaxTextBytes>;
using AddressText = Text<kMaxAddressBytes>;
using PhaseMs = Within<U32, 0, kMaxPhaseMs>;

template <>
struct Fields<Setting> {
  static constexpr std::string_view kName = "setting";
  static constexpr std::tuple list{Field<&Setting::name, Text<kMaxSettingNameBytes>>{"name"},
                                   Field<&Setting::value, ReasonText>{"value"}};
};
template <>
struct Fields<Member> {
  static constexpr std::string_view kName = "member";
  static constexpr std::tuple list{
      Field<&Member::key, Key>{"key"},
      Field<&Member::address, AddressText>{"address"},
      Field<&Member::shard, U32>{"shard"},
      Field<&Member::upload_bps, U64>{"upload_bps"},
      Field<&Member::first_round, U64>{"first_round"},
      Field<&Member::reachability, Enum<Reachability, Reachability::unreachable>>{"reachability",
                                                                                  2}};
};
template <>
struct Fields<Donor> {
  static constexpr std::string_view kName = "donor";
  static constexpr std::tuple list{Field<&Donor::key, Key>{"key"},
                                   Field<&Donor::address, AddressText>{"address"}};
};
template <>
struct Fields<RelayRoute> {
  static constexpr std::string_view kName = "relay route";
  static constexpr std::tuple list{Field<&RelayRoute::a, U32>{"a"}, Field<&RelayRoute::b, U32>{"b"},
                                   Field<&RelayRoute::via, U32>{"via"}};
};
template <>
struct Fields<MisconductProof> {
  static constexpr std::string_view kName = "misconduct proof";
  static constexpr std::tuple list{Field<&MisconductProof::first, SignedStatement>{"first"},
                                   Field<&MisconductProof::second, SignedStatement>{"second"}};
};

template <>
struct Fields<JoinRequest> {
  static constexpr std::tuple list{
      Field<&JoinRequest::software, Text<kMaxSettingNameBytes>>{"software"},
      Field<&JoinRequest::listen_address, AddressText>{"listen_address"},
      Field<&JoinRequest::upload_bps, U64>{"upload_bps"},
      Field<&JoinRequest::credential, ReasonText>{"credential"},
      Field<&JoinRequest::settings, List<Record<Setting>, kMaxSettings>>{"settings"},
      Field<&JoinRequest::genesis, Hash>{"genesis"},
      Field<&JoinRequest::state_round, U64>{"state_round"},
      Field<&JoinRequest::state_hash, Hash>{"state_hash"},
      Field<&JoinRequest::relay_pairs, U32>{"relay_pairs", 2},
      Field<&JoinRequest::tentative_round, U64>{"tentative_round", 3},
      Field<&JoinRequest::tentative_hash, Hash>{"tentative_hash", 3}};
};
template <>
struct Fields<JoinReply> {
  static constexpr std::tuple list{Field<&JoinReply::accepted, Bool>{"accepted"},
                                   Field<&JoinReply::refusal, ReasonText>{"refusal"},
                                   Field<&JoinReply::shard_index, U32>{"shard_index"},
                                   Field<&JoinReply::shard_count, U32>{"shard_count"},
                                   Field<&JoinReply::heartbeat_ms, U32>{"heartbeat_ms"},
                                   Field<&JoinReply::eviction_ms, U32>{"eviction_ms"},
                                   Field<&JoinReply::committed_round, U64>{"committed_round"},
                                   Field<&JoinReply::committed_hash, Hash>{"committed_hash"},
                                   Field<&JoinReply::final_round, U64>{"final_round", 2},
                                   Field<&JoinReply::phase_ms, PhaseMs>{"phase_ms", 3}};
};
template <>
struct Fields<Heartbeat> {
  static constexpr std::tuple list{
      Field<&Heartbeat::state_round, U64>{"state_round"},
      Field<&Heartbeat::inner_step, U64>{"inner_step"},
      Field<&Heartbeat::loss, F32>{"loss"},
      Field<&Heartbeat::tokens_per_s, F32>{"tokens_per_s"},
      Field<&Heartbeat::bytes_sent, U64>{"bytes_sent"},
      Field<&Heartbeat::bytes_received, U64>{"bytes_received"},
      Field<&Heartbeat::network_wait_s, F32>{"network_wait_s"},
      Field<&Heartbeat::bytes_relayed, U64>{"bytes_relayed", 3},
      Field<&Heartbeat::sketch, Optional<Array<F32, kSketchSize>>>{"sketch", 2}};
};
template <>
struct Fields<HeartbeatAck> {
  static constexpr std::tuple list{Field<&HeartbeatAck::epoch, U64>{"epoch"},
                                   Field<&HeartbeatAck::next_round, U64>{"next_round"}};
};
template <>
struct Fields<Leave> {
  static constexpr std::tuple list{Field<&Leave::reason, ReasonText>{"reason"}};
};
template <>
struct Fields<Ready> {
  static constexpr std::tuple list{Field<&Ready::round, U64>{"round"},
                                   Field<&Ready::update_norm, F32>{"update_norm"},
                                   Field<&Ready::base_hash, Hash>{"base_hash"},
                                   Field<&Ready::loss, F32>{"loss", 2},
                                   Field<&Ready::tokens, U64>{"tokens", 3},
                                   Field<&Ready::step_seconds, F32>{"step_seconds", 4}};
};
template <>
struct Fields<Group> {
  static constexpr std::tuple list{
      Field<&Group::round, U64>{"round"},
      Field<&Group::attempt, U32>{"attempt"},
      Field<&Group::epoch, U64>{"epoch"},
      Field<&Group::members, List<Key, kMaxMembers>>{"members"},
      Field<&Group::median_norm, F32>{"median_norm"},
      Field<&Group::norm_limit, F32>{"norm_limit"},
      Field<&Group::trim, U32>{"trim", 2},
      Field<&Group::tokens, List<Within<U64, 1, kMaxRoundTokens>, kMaxMembers>>{"tokens", 3},
      Field<&Group::phase_ms, PhaseMs>{"phase_ms", 5},
      Field<&Group::relays, List<Record<RelayRoute>, kMaxRelayRoutes>>{"relays", 4},
      Field<&Group::check_owners, Bool>{"check_owners", 4}};
};
// The fields several messages open with: the round (and attempt) they are about, a state's hash.
template <typename M>
constexpr std::tuple kRoundAttempt{Field<&M::round, U64>{"round"},
                                   Field<&M::attempt, U32>{"attempt"}};
template <typename M>
constexpr std::tuple kStateHash{Field<&M::state_hash, Hash>{"state_hash"}};
template <typename M>
constexpr auto kRoundState = std::tuple_cat(std::tuple{Field<&M::round, U64>{"round"}},
                                            kStateHash<M>);

template <>
struct Fields<RoundDone> {
  static constexpr auto list = std::tuple_cat(kRoundAttempt<RoundDone>, kStateHash<RoundDone>);
};
template <>
struct Fields<RoundFailed> {
  static constexpr auto list =
      std::tuple_cat(kRoundAttempt<RoundFailed>,
                     std::tuple{Field<&RoundFailed::reason, ReasonText>{"reason"},
                                Field<&RoundFailed::suspect, Optional<Key>>{"suspect"}});
};
template <>
struct Fields<ProvenMisconduct> {
  static constexpr std::tuple list{
      Field<&ProvenMisconduct::proof, Record<MisconductProof>>{"proof"}};
};
template <>
struct Fields<Commit> {
  static constexpr auto list = std::tuple_cat(kRoundAttempt<Commit>, kStateHash<Commit>);
};
template <>
struct Fields<AbortRound> {
  static constexpr auto list = std::tuple_cat(
      kRoundAttempt<AbortRound>, std::tuple{Field<&AbortRound::reason, ReasonText>{"reason"},
                                            Field<&AbortRound::retry, Bool>{"retry"}});
};
template <>
struct Fields<Resync> {
  static constexpr auto list =
      std::tuple_cat(kRoundState<Resync>,
                     std::tuple{Field<&Resync::donors, List<Record<Donor>, kMaxDonors>>{"donors"},
                                Field<&Resync::phase_ms, PhaseMs>{"phase_ms", 2}});
};
template <>
struct Fields<StateReport> {
  static constexpr auto list = kRoundState<StateReport>;
};
template <>
struct Fields<RunEnded> {
  static constexpr auto list =
      std::tuple_cat(kRoundState<RunEnded>, std::tuple{Field<&RunEnded::kept, Bool>{"kept"}});
};
template <>
struct Fields<MisbehaviourReport> {
  static constexpr std::tuple list{Field<&MisbehaviourReport::suspect, Key>{"suspect"},
                                   Field<&MisbehaviourReport::reason, ReasonText>{"reason"}};
};
template <>
struct Fields<ViewRequest> {
  static constexpr std::tuple<> list{};
};
// The signed view and view delta: these are the fields the tracker's signature covers.
template <>
struct Fields<View> {
  static constexpr std::tuple list{
      Field<&View::epoch, U64>{"epoch"},
      Field<&View::members, List<Record<Member>, kMaxMembers>>{"members"}};
};
template <>
struct Fields<ViewDelta> {
  static constexpr std::tuple list{
      Field<&ViewDelta::base_epoch, U64>{"base_epoch"},
      Field<&ViewDelta::epoch, U64>{"epoch"},
      Field<&ViewDelta::removed, List<Key, kMaxMembers>>{"removed"},
      Field<&ViewDelta::changed, List<Record<Member>, kMaxMembers>>{"changed"},
      Field<&ViewDelta::removed_from_round, U64>{"removed_from_round"},
      Field<&ViewDelta::members_digest, Hash>{"members_digest"}};
};

// The records, for the docs' table.
using TrackerRecords = std::tuple<Setting, Member, Donor, RelayRoute, MisconductProof>;

}  // namespace loco::proto::wire

namespace loco::proto {

// The two messages the tracker signs (encode_signed_view, open_signed_view, and the same for
// deltas); the others are TrackerMessages (tracker_messages.hpp).
using SignedTrackerMessages = std::tuple<View, ViewDelta>;

// Calls f.template operator()<M>() for each type M of Tuple, in order.
template <typename Tuple, typename F>
void for_each_type(F&& f) {
  std::apply([&](auto... m) { (f.template operator()<decltype(m)>(), ...); }, Tuple{});
}

}  // namespace loco::proto
