// Fuzz target: what a peer can send the tracker. The first byte picks a message type (every
// tracker message of the description, tracker_message_fields.hpp, then the custody relay and the
// judge's; or an unknown one), the rest is its body, fed to a real TrackerCore that already has two
// members, in a round; then the same bytes to every tracker message decoder (and the judge's,
// judge_messages.hpp), the state relays (custody), the signed view opener, the state-file and the
// custody-file decoders. Nothing may crash or throw out of the core; decoders throw only
// loco::Error.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/custody_file.hpp"
#include "loco/proto/state_relay.hpp"
#include "loco/proto/tracker_message_fields.hpp"

namespace {

using namespace loco;
using namespace loco::proto;
namespace th = loco::proto::testing;

// The types the first byte picks from: the described tracker messages, signed ones, then the
// others a tracker reads.
std::vector<MessageType> types() {
  std::vector<MessageType> out;
  const auto add = [&]<typename M>() { out.push_back(M::kType); };
  for_each_type<TrackerMessages>(add);
  for_each_type<SignedTrackerMessages>(add);
  out.insert(out.end(),
             {MessageType::state_to_tracker, MessageType::verdict, MessageType::judge_call});
  return out;
}
const std::vector<MessageType> kTypes = types();

std::uint8_t index_of(MessageType type) {
  return static_cast<std::uint8_t>(std::find(kTypes.begin(), kTypes.end(), type) - kTypes.begin());
}

template <typename M>
void try_decode(std::span<const std::byte> body) {
  try {
    (void)decode<M>(body);
  } catch (const Error&) {
  }
}

constexpr std::uint64_t kFuzzStepTokens = 64;

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  const auto with_type = [](MessageType type, const std::vector<std::byte>& body) {
    std::vector<std::uint8_t> out{index_of(type)};
    for (auto b : body) out.push_back(std::to_integer<std::uint8_t>(b));
    return out;
  };
  th::Harness h;
  // Every described message with its fields' defaults, then messages that reach further.
  std::vector<std::vector<std::uint8_t>> seeds;
  for_each_type<TrackerMessages>(
      [&]<typename M>() { seeds.push_back(with_type(M::kType, encode(M{}))); });
  const std::vector<std::vector<std::uint8_t>> reaching = {
      with_type(MessageType::join_request, encode(h.join_request(3))),
      with_type(MessageType::join_request, encode([&] {  // it claims a tentative state
                  JoinRequest r = h.join_request(4);
                  r.tentative_round = 1;
                  r.tentative_hash = th::digest_of(1);
                  return r;
                }())),
      with_type(MessageType::ready, encode(Ready{.round = 1,
                                                 .update_norm = 1,
                                                 .base_hash = th::kGenesis,
                                                 .tokens = 5 * kFuzzStepTokens,
                                                 .step_seconds = 0.25f})),
      with_type(MessageType::group,
                encode(Group{.round = 1,
                             .attempt = 1,
                             .epoch = 1,
                             .members = {th::key(1).public_key(), th::key(2).public_key()},
                             .tokens = {64, 128},
                             .phase_ms = 2000})),
      with_type(MessageType::round_failed,
                encode(RoundFailed{
                    .round = 1, .attempt = 1, .reason = "x", .suspect = th::key(1).public_key()})),
      with_type(MessageType::state_to_tracker,
                encode_relay(MessageType::state_to_tracker, MessageType::chunk_request,
                             encode_chunk_request(1, 0))),
      with_type(MessageType::misconduct_proof,
                encode(ProvenMisconduct{
                    .proof = {.first = sign_statement(th::key(1), "run-h", 1, 1,
                                                      StatementKind::result, 0, Digest{1}),
                              .second = sign_statement(th::key(2), "run-h", 1, 1,
                                                       StatementKind::result, 0, Digest{2})}})),
      with_type(MessageType::verdict,
                encode(Verdict{.judged = sign_statement(th::key(1), "run-h", 1, 1,
                                                        StatementKind::verdict, 0, Digest{3}),
                               .missing = {th::key(2).public_key()},
                               .equivocation = {}})),
      with_type(
          MessageType::judge_call,
          encode(JudgeCall{.round = 1,
                           .attempt = 1,
                           .segment = 0,
                           .judge = th::key(2).public_key(),
                           .grace_ms = 1000,
                           .owner_result = sign_statement(th::key(1), "run-h", 1, 1,
                                                          StatementKind::result, 0, Digest{1}),
                           .checker_result = sign_statement(
                               th::key(2), "run-h", 1, 1, StatementKind::result, 0, Digest{2})}))};
  seeds.insert(seeds.end(), reaching.begin(), reaching.end());
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto body = std::as_bytes(std::span(data + 1, size - 1));
  const std::uint16_t type = data[0] < kTypes.size()
                                 ? static_cast<std::uint16_t>(kTypes[data[0]])
                                 : static_cast<std::uint16_t>(data[0] << 8 | 0x11);
  static th::Harness* h = [] {
    auto* harness = new th::Harness();
    // Rounds bounded by time and paced by the tracker: readiness carries tokens and step times,
    // the group weighs the tokens and carries the phase.
    harness->config.token_weighting.step_tokens = kFuzzStepTokens;
    harness->config.pacing = RoundPacing{.steps = 4};
    harness->start();
    return harness;
  }();
  // A fresh tracker each time, with two members in a round, so every handler is reachable.
  h->peers.clear();
  h->tracker_events.clear();
  h->start();
  h->join(1);
  h->join(2);
  h->ready(1, 1.0f, 3 * kFuzzStepTokens, 0.1f);
  h->ready(2, 1.0f, 9 * kFuzzStepTokens, 0.3f);
  h->tracker->on_message(h->now, th::key(1).public_key(), type, body);  // a member
  h->tracker->on_message(h->now, th::key(9).public_key(), type, body);  // a stranger
  h->pump();
  for_each_type<TrackerMessages>([&]<typename M>() { try_decode<M>(body); });
  // The judge's messages (judge_messages.hpp); a tracker gets a verdict above.
  for (const auto decode_judge :
       {+[](std::span<const std::byte> b) { (void)decode_judge_call(b); },
        +[](std::span<const std::byte> b) { (void)decode_judge_chunk(b); },
        +[](std::span<const std::byte> b) { (void)decode_judge_inputs(b); },
        +[](std::span<const std::byte> b) { (void)decode_verdict(b); }}) {
    try {
      decode_judge(body);
    } catch (const Error&) {
    }
  }
  try {
    (void)open_signed_view(body, th::key(200).public_key(), "run-h");
  } catch (const Error&) {
  }
  try {
    (void)open_signed_view_delta(body, th::key(200).public_key(), "run-h");
  } catch (const Error&) {
  }
  try {
    (void)decode_snapshot(body, "fuzz");
  } catch (const Error&) {
  }
  for (const MessageType relay : {MessageType::state_to_tracker, MessageType::state_to_peer}) {
    try {
      (void)decode_relay(relay, body);
    } catch (const Error&) {
    }
  }
  try {
    (void)decode_custody_file(body, "fuzz", 1 << 20);
  } catch (const Error&) {
  }
  return 0;
}
