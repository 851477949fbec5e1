#pragma once
// The messages between a peer and the tracker (docs/PROTOCOL.md, "Peer ↔ tracker messages"): each
// struct's fields in wire order, as tracker_message_fields.hpp describes them with their wire types
// and bounds. encode() writes the version byte and the fields, decode<T>() checks the size against
// the type's limit, the version, every length and count before it allocates, each bound, and that
// nothing trails, and throws Error(format) naming the message.
//
// The membership view is signed by the tracker (encode_signed_view / open_signed_view), so a peer
// can tell a view from the tracker from one a member forged.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "loco/core/hash.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/owner_check.hpp"
#include "loco/proto/parameter_sketch.hpp"
#include "loco/secure/identity.hpp"
#include "loco/secure/signature_memo.hpp"

namespace loco::proto {

// Limits on fields, shared by encoder (asserted) and decoder (refused).
inline constexpr std::size_t kMaxAddressBytes = 256;
inline constexpr std::size_t kMaxTextBytes = 1024;  // reasons, credentials, setting values
inline constexpr std::size_t kMaxSettings = 64;
inline constexpr std::size_t kMaxSettingNameBytes = 64;
inline constexpr std::size_t kMaxMembers = 10'000;
inline constexpr std::size_t kMaxDonors = 16;
// A member's tokens in a round's group (Group::tokens): at most 2^40, so that the sum over
// kMaxMembers members stays exact in a double and in a u64.
inline constexpr std::uint64_t kMaxRoundTokens = std::uint64_t{1} << 40;
// Rounds paced by the tracker (round_pace.hpp): a member's measured step time (Ready::step_seconds)
// and the phase the tracker sets (Group::phase_ms) are at most an hour.
inline constexpr float kMaxStepSeconds = 3600;
inline constexpr std::uint32_t kMaxPhaseMs = 3'600'000;

struct Setting {
  std::string name;
  std::string value;
  bool operator==(const Setting&) const = default;
};

struct JoinRequest {
  static constexpr MessageType kType = MessageType::join_request;
  std::string software;           // "loco 0.1.0": a refusal can name a version skew
  std::string listen_address;     // host:port where the other peers reach this one
  std::uint64_t upload_bps = 0;   // declared upload bandwidth (ring order)
  std::string credential;         // the run's join token, if it has one
  std::vector<Setting> settings;  // what fixes the shared state (model, seed, codec, ...)
  Digest genesis{};               // hash of the round-0 state these settings give
  std::uint64_t state_round = 0;  // the round of the state the peer holds
  Digest state_hash{};            // and its hash
  // How many pairs of unreachable members this peer relays at once if it is reachable
  // (relay_core.hpp; 0: none). A claim the tracker plans with: the peer refuses more anyway.
  std::uint32_t relay_pairs = 0;
  // The state the peer computed for a round it reported done (RoundDone) and was not told the
  // outcome of (commit or abort), kept across a lost tracker link: its round (0: none) and hash.
  // A tracker that committed exactly that (a leader killed after saving the commit and before
  // announcing it) tells the peer to commit it rather than go back a round. A claim, as
  // state_hash is: only a round and hash the tracker committed count.
  std::uint64_t tentative_round = 0;
  Digest tentative_hash{};
};

struct JoinReply {
  static constexpr MessageType kType = MessageType::join_reply;
  bool accepted = false;
  std::string refusal;  // why not, when not accepted
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  std::uint32_t heartbeat_ms = 0;  // send a heartbeat this often
  std::uint32_t eviction_ms = 0;   // silent this long: evicted
  // The run's current state: a peer that holds another will be sent a resync.
  std::uint64_t committed_round = 0;
  Digest committed_hash{};
  // The run's final round (train/run_end.hpp, from the tracker's run config; 0: none declared): a
  // peer at or past it waits for RunEnded before it leaves, and one that joins there trains no
  // more, whatever its own config says.
  std::uint64_t final_round = 0;
  // Rounds paced by the tracker: the phase a member trains now, as Group::phase_ms (a newcomer
  // that holds the run's state learns it here, and trains its first phase with the others rather
  // than H steps of its own); 0: it keeps its own.
  std::uint32_t phase_ms = 0;
};

struct Heartbeat {
  static constexpr MessageType kType = MessageType::heartbeat;
  std::uint64_t state_round = 0;
  std::uint64_t inner_step = 0;
  float loss = 0;
  float tokens_per_s = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  float network_wait_s = 0;
  // Bytes this peer forwarded as a relay for unreachable members (relay_core.hpp), a claim shown
  // on the status page and used for nothing else.
  std::uint64_t bytes_relayed = 0;
  // Gossip mode: a sketch of the peer's θ, from which the tracker shows the members' spread.
  std::optional<ParameterSketch> sketch;
};

struct HeartbeatAck {
  static constexpr MessageType kType = MessageType::heartbeat_ack;
  std::uint64_t epoch = 0;
  // The run's next round: the one the tracker forms, or in gossip mode the one most members train
  // for (the median of their state rounds, plus one): a peer ahead of it waits for its group.
  std::uint64_t next_round = 0;
};

struct Leave {
  static constexpr MessageType kType = MessageType::leave;
  std::string reason;
};

// Whether the other members can connect to a member, as the tracker measured it at join by
// dialling the member's address back (docs/TRACKER.md, "Reachability"): the peer's own claim
// counts for nothing. Not measured yet (the probe is under way): treated as reachable until it ends
// (link_direction.hpp), as every member was before the probe existed.
enum class Reachability : std::uint8_t { unmeasured = 0, reachable = 1, unreachable = 2 };
std::string_view reachability_name(Reachability r);

struct Member {
  secure::PublicKey key;
  std::string address;
  std::uint32_t shard = 0;
  std::uint64_t upload_bps = 0;
  // Gossip mode: the first round whose grouping lists this member (proto/gossip_roster.hpp); the
  // tracker stamps it at admission. 0 in all-reduce mode.
  std::uint64_t first_round = 0;
  Reachability reachability = Reachability::unmeasured;
  bool operator==(const Member&) const = default;
};

struct View {
  static constexpr MessageType kType = MessageType::view;
  std::uint64_t epoch = 0;
  std::vector<Member> members;  // ordered by key
  bool operator==(const View&) const = default;
};

// The change from the view of `base_epoch` to the view of `epoch` (docs/PROTOCOL.md, "Views"):
// what the tracker broadcasts to members that hold the previous broadcast. members_digest is
// MembersDigest (view_delta.hpp) of the resulting member list: a receiver that cannot rebuild
// that list (it holds another base) asks for the full view with a ViewRequest.
struct ViewDelta {
  static constexpr MessageType kType = MessageType::view_delta;
  std::uint64_t base_epoch = 0;
  std::uint64_t epoch = 0;
  std::vector<secure::PublicKey> removed;  // ordered by key
  std::vector<Member> changed;             // added or changed since base_epoch, ordered by key
  // Gossip mode: the first round whose grouping no longer lists the removed members (0: at once).
  std::uint64_t removed_from_round = 0;
  Digest members_digest{};
  bool operator==(const ViewDelta&) const = default;
};

struct ViewRequest {
  static constexpr MessageType kType = MessageType::view_request;
};

struct Ready {
  static constexpr MessageType kType = MessageType::ready;
  std::uint64_t round = 0;  // the round this peer's update is for
  float update_norm = 0;    // ‖Δ‖₂ of its update; NaN or inf: the update is broken
  Digest base_hash{};       // hash of the state the update was computed from (round − 1)
  // The mean training loss of the steps that made the update (the round's loss on the status
  // page); NaN: not known. Shown, never acted on.
  float loss = std::numeric_limits<float>::quiet_NaN();
  // The tokens the update was trained on (rounds bounded by time, proto/token_weights.hpp): a
  // claim, which the tracker clamps before it weighs the update by it. 0: rounds of fixed H.
  std::uint64_t tokens = 0;
  // Rounds paced by the tracker (round_pace.hpp): the member's measured seconds per inner step over
  // the phase behind the update, a claim the tracker takes the median of; 0: not measured. Finite,
  // in [0, kMaxStepSeconds], or the message is malformed.
  float step_seconds = 0;
};

struct RelayRoute {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t via = 0;
  bool operator==(const RelayRoute&) const = default;
};
// At most this many relayed links in one group (12 bytes each in the group message).
inline constexpr std::size_t kMaxRelayRoutes = 65'536;

struct Group {
  static constexpr MessageType kType = MessageType::group;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::uint64_t epoch = 0;                 // the view the members are taken from
  std::vector<secure::PublicKey> members;  // in ring order
  // What received updates are checked against: no honest member's update exceeds
  // norm_limit x median_norm (the tracker refused those), so no honest partial sum of k of them
  // exceeds k times that.
  float median_norm = 0;
  float norm_limit = 0;
  // The direct exchange's segment owners sum each coordinate without its `trim` smallest and
  // `trim` largest contributions (a trimmed mean, all_reduce.hpp); 0: the plain mean.
  std::uint32_t trim = 0;
  // Rounds bounded by time: each member's tokens as the tracker clamped them, in member order;
  // member i sends its update scaled by N·tokens[i] / Σ tokens, so the group's mean is the
  // token-weighted mean (proto/token_weights.hpp). Empty: the plain mean.
  std::vector<std::uint64_t> tokens{};
  // Rounds paced by the tracker (round_pace.hpp): how long each member's next inner phase lasts,
  // in ms (at most kMaxPhaseMs); 0: each keeps its own.
  std::uint32_t phase_ms = 0;
  // The links between two members both measured unreachable: through which member each goes
  // (relay_plan.hpp). Indices into `members`; a < b, and `via` is neither.
  std::vector<RelayRoute> relays{};
  // The direct exchange's segments are reduced by a checker too, and both sign their result
  // (owner_check.hpp).
  bool check_owners = false;
};

struct RoundDone {
  static constexpr MessageType kType = MessageType::round_done;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  Digest state_hash{};  // of the state the peer holds once it applies this round
};

struct RoundFailed {
  static constexpr MessageType kType = MessageType::round_failed;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::string reason;
  std::optional<secure::PublicKey> suspect;  // the member whose bytes were bad, if one was
};

// A member's proof that others broke the round (owner_check.hpp): it stands for a failure report.
struct ProvenMisconduct {
  static constexpr MessageType kType = MessageType::misconduct_proof;
  MisconductProof proof;
};

struct Commit {
  static constexpr MessageType kType = MessageType::commit;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  Digest state_hash{};  // the majority's: a member that computed another hash resyncs
};

struct AbortRound {
  static constexpr MessageType kType = MessageType::abort_round;
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  std::string reason;
  bool retry = false;  // a new attempt with the survivors follows; else keep training
};

struct Donor {
  secure::PublicKey key;
  std::string address;
  bool operator==(const Donor&) const = default;
};

struct Resync {
  static constexpr MessageType kType = MessageType::resync;
  std::uint64_t round = 0;  // fetch the state of this round
  Digest state_hash{};      // whose hash is this
  std::vector<Donor> donors;
  // Rounds paced by the tracker: the phase the member trains once it holds the state, as
  // Group::phase_ms (a member left out of the groups learns it here); 0: it keeps its own.
  std::uint32_t phase_ms = 0;
};

struct StateReport {
  static constexpr MessageType kType = MessageType::state_report;
  std::uint64_t round = 0;
  Digest state_hash{};
};

// The run's final round (train/run_end.hpp) is committed with `state_hash`, sent to each member
// that holds it once the tracker holds a custody copy of it (`kept`), or at once when the tracker
// keeps none (custody off or the state too large): a member at the final round waits for it
// before it leaves, so that the run's model outlives its peers.
struct RunEnded {
  static constexpr MessageType kType = MessageType::run_ended;
  std::uint64_t round = 0;
  Digest state_hash{};
  bool kept = false;
};

struct MisbehaviourReport {
  static constexpr MessageType kType = MessageType::misbehaviour_report;
  secure::PublicKey suspect;
  std::string reason;
};

// The messages encode() and decode<T>() take (View and ViewDelta travel signed, below). Each is
// described once, field by field, in tracker_message_fields.hpp.
using TrackerMessages =
    std::tuple<JoinRequest, Heartbeat, Leave, Ready, RoundDone, RoundFailed, StateReport,
               MisbehaviourReport, ViewRequest, ProvenMisconduct, JoinReply, HeartbeatAck, Group,
               Commit, AbortRound, Resync, RunEnded>;

template <typename M, typename Tuple>
inline constexpr bool kOneOf = false;
template <typename M, typename... Ts>
inline constexpr bool kOneOf<M, std::tuple<Ts...>> = (std::is_same_v<M, Ts> || ...);
template <typename M>
concept TrackerMessage = kOneOf<M, TrackerMessages>;

// Defined in tracker_messages.cpp for each of TrackerMessages.
template <typename M>
struct TrackerCodec {
  static std::vector<std::byte> encode(const M& m);
  static M decode(std::span<const std::byte> body);
};

template <TrackerMessage M>
std::vector<std::byte> encode(const M& m) {
  return TrackerCodec<M>::encode(m);
}

// Decodes a message body of type M::kType. Throws Error(format) naming the message.
template <TrackerMessage M>
M decode(std::span<const std::byte> body) {
  return TrackerCodec<M>::decode(body);
}

// The view, signed with the tracker's key over the run id and the view's bytes.
std::vector<std::byte> encode_signed_view(const View& view, const secure::KeyPair& tracker,
                                          std::string_view run_id);
// Checks the signature against the pinned tracker key and the run id (Error(crypto) when it does
// not verify: forged, altered, or another run's) and decodes (Error(format)). With a memo, a
// signature it verified before is not checked again (signature_memo.hpp).
View open_signed_view(std::span<const std::byte> body, const secure::PublicKey& tracker,
                      std::string_view run_id, secure::SignatureMemo* memo = nullptr);
// The same for a view delta (its own signature domain: a delta cannot pass as a view).
std::vector<std::byte> encode_signed_view_delta(const ViewDelta& delta,
                                                const secure::KeyPair& tracker,
                                                std::string_view run_id);
ViewDelta open_signed_view_delta(std::span<const std::byte> body, const secure::PublicKey& tracker,
                                 std::string_view run_id, secure::SignatureMemo* memo = nullptr);

}  // namespace loco::proto
