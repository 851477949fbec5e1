// Fuzz target: what a peer can send the tracker. The first byte picks a message type from the
// table (or an unknown one), the rest is its body, fed to a real TrackerCore that already has two
// members, in a round; then the same bytes to every tracker message decoder (and the judge's,
// judge_messages.hpp), the state relays (custody), the signed view opener, the state-file and the
// custody-file decoders. Nothing may crash or throw out of the core; decoders throw only
// loco::Error.

#include <cstdint>

#include "../proto/tracker_harness.hpp"
#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/custody_file.hpp"
#include "loco/proto/state_relay.hpp"

namespace {

using namespace loco;
using namespace loco::proto;
namespace th = loco::proto::testing;

constexpr MessageType kTypes[] = {
    MessageType::join_request, MessageType::heartbeat,           MessageType::leave,
    MessageType::ready,        MessageType::round_done,          MessageType::round_failed,
    MessageType::state_report, MessageType::misbehaviour_report, MessageType::view,
    MessageType::group,        MessageType::state_to_tracker,    MessageType::misconduct_proof,
    MessageType::verdict,      MessageType::judge_call};

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
  const auto with_type = [](std::uint8_t index, const std::vector<std::byte>& body) {
    std::vector<std::uint8_t> out{index};
    for (auto b : body) out.push_back(std::to_integer<std::uint8_t>(b));
    return out;
  };
  th::Harness h;
  return {
      with_type(0, encode(h.join_request(3))),
      with_type(3, encode(Ready{.round = 1,
                                .update_norm = 1,
                                .base_hash = th::kGenesis,
                                .tokens = 5 * kFuzzStepTokens,
                                .step_seconds = 0.25f})),
      with_type(3, encode(Group{.round = 1,
                                .attempt = 1,
                                .epoch = 1,
                                .members = {th::key(1).public_key(), th::key(2).public_key()},
                                .tokens = {64, 128},
                                .phase_ms = 2000})),
      with_type(5,
                encode(RoundFailed{
                    .round = 1, .attempt = 1, .reason = "x", .suspect = th::key(1).public_key()})),
      with_type(10, encode_relay(MessageType::state_to_tracker, MessageType::chunk_request,
                                 encode_chunk_request(1, 0))),
      with_type(11, encode(ProvenMisconduct{
                        .proof = {.first = sign_statement(th::key(1), "run-h", 1, 1,
                                                          StatementKind::result, 0, Digest{1}),
                                  .second = sign_statement(th::key(2), "run-h", 1, 1,
                                                           StatementKind::result, 0, Digest{2})}})),
      with_type(12, encode(Verdict{.judged = sign_statement(th::key(1), "run-h", 1, 1,
                                                            StatementKind::verdict, 0, Digest{3}),
                                   .missing = {th::key(2).public_key()},
                                   .equivocation = {}})),
      with_type(13, encode(JudgeCall{
                        .round = 1,
                        .attempt = 1,
                        .segment = 0,
                        .judge = th::key(2).public_key(),
                        .grace_ms = 1000,
                        .owner_result = sign_statement(th::key(1), "run-h", 1, 1,
                                                       StatementKind::result, 0, Digest{1}),
                        .checker_result = sign_statement(th::key(2), "run-h", 1, 1,
                                                         StatementKind::result, 0, Digest{2})}))};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto body = std::as_bytes(std::span(data + 1, size - 1));
  const std::uint16_t type = data[0] < std::size(kTypes)
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
  try_decode<JoinRequest>(body);
  try_decode<JoinReply>(body);
  try_decode<Heartbeat>(body);
  try_decode<Group>(body);
  try_decode<Resync>(body);
  try_decode<RoundFailed>(body);
  try_decode<ViewRequest>(body);
  try_decode<RunEnded>(body);
  try_decode<ProvenMisconduct>(body);
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
