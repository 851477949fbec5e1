// Today's encoding of every tracker message, pinned byte for byte with fixed field values: the
// wire of docs/PROTOCOL.md does not change when the code that writes it does.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "loco/core/error.hpp"
#include "loco/proto/tracker_message_fields.hpp"
#include "loco/proto/tracker_messages.hpp"
#include "tracker_harness.hpp"

namespace loco::proto {
namespace {

using testing::digest_of;
using testing::key;

std::string hex(const std::vector<std::byte>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::byte b : bytes) {
    out += kDigits[std::to_integer<unsigned>(b) >> 4];
    out += kDigits[std::to_integer<unsigned>(b) & 15];
  }
  return out;
}

Member member(std::uint8_t n) {
  return Member{.key = key(n).public_key(),
                .address = "h:" + std::to_string(n),
                .shard = n,
                .upload_bps = 1000u * n,
                .first_round = n,
                .reachability = static_cast<Reachability>(n % 3)};
}

ParameterSketch sketch() {
  ParameterSketch s{};
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 0.5f * static_cast<float>(i) - 3;
  return s;
}

struct Golden {
  const char* name;
  std::vector<std::byte> body;
  const char* hex;
};

std::vector<Golden> goldens() {
  const auto tracker = key(200);
  return {
      {"join_request",
       encode(JoinRequest{.software = "loco 0.1.0",
                          .listen_address = "10.0.0.1:7701",
                          .upload_bps = 123,
                          .credential = "token",
                          .settings = testing::run_settings(),
                          .genesis = digest_of(1),
                          .state_round = 5,
                          .state_hash = digest_of(2),
                          .relay_pairs = 3,
                          .tentative_round = 6,
                          .tentative_hash = digest_of(3)}),
       "030a0000006c6f636f20302e312e300d00000031302e302e302e313a373730317b00000000000000"
       "05000000746f6b656e03000000050000006d6f64656c0a0000006770742d326c2d64363404000000"
       "73656564010000003105000000636f6465630e000000696e74383a626c6f636b3d32353601000000"
       "000000000000000000000000000000000000000000000000000000ee050000000000000002000000"
       "000000000000000000000000000000000000000000000000000000ee03000000"
       "0600000000000000030000000000000000000000"
       "00000000000000000000000000000000000000ee"},
      {"join_reply",
       encode(JoinReply{.accepted = true,
                        .refusal = "no",
                        .shard_index = 3,
                        .shard_count = 8,
                        .heartbeat_ms = 2000,
                        .eviction_ms = 10000,
                        .committed_round = 7,
                        .committed_hash = digest_of(7),
                        .final_round = 60,
                        .phase_ms = 2500}),
       "0301020000006e6f0300000008000000d00700001027000007000000000000000700000000000000"
       "0000000000000000000000000000000000000000000000ee3c00000000000000c4090000"},
      {"heartbeat",
       encode(Heartbeat{.state_round = 1,
                        .inner_step = 2,
                        .loss = 3.5f,
                        .tokens_per_s = 4,
                        .bytes_sent = 5,
                        .bytes_received = 6,
                        .network_wait_s = 7,
                        .bytes_relayed = 8,
                        .sketch = {}}),
       "03010000000000000002000000000000000000604000008040050000000000000006000000000000"
       "000000e040080000000000000000"},
      {"heartbeat with a sketch", encode(Heartbeat{.state_round = 9, .sketch = sketch()}),
       "03090000000000000000000000000000000000000000000000000000000000000000000000000000"
       "0000000000000000000000000001000040c0000020c0000000c00000c0bf000080bf000000bf0000"
       "00000000003f0000803f0000c03f0000004000002040000040400000604000008040000090400000"
       "a0400000b0400000c0400000d0400000e0400000f040000000410000084100001041000018410000"
       "20410000284100003041000038410000404100004841"},
      {"heartbeat_ack", encode(HeartbeatAck{.epoch = 4, .next_round = 11}),
       "0104000000000000000b00000000000000"},
      {"leave", encode(Leave{.reason = "bye"}), "0103000000627965"},
      {"ready",
       encode(Ready{.round = 5,
                    .update_norm = 0.5f,
                    .base_hash = digest_of(4),
                    .loss = 2.25f,
                    .tokens = 1u << 20,
                    .step_seconds = 0.25f}),
       "0405000000000000000000003f040000000000000000000000000000000000000000000000000000"
       "00000000ee0000104000001000000000000000803e"},
      {"group",
       encode(Group{.round = 3,
                    .attempt = 2,
                    .epoch = 9,
                    .members = {key(1).public_key(), key(2).public_key(), key(3).public_key()},
                    .median_norm = 1.5f,
                    .norm_limit = 4,
                    .trim = 1,
                    .tokens = {64, 128, 256},
                    .phase_ms = 2500,
                    .relays = {RelayRoute{.a = 0, .b = 2, .via = 1}},
                    .check_owners = true}),
       "050300000000000000020000000900000000000000030000007b3ebc3b53735ba05b24def69f3ebd"
       "392f186be602a78ace86edba035713c408b2ce8de779f8eaa591d5cf70c432db0d128e3a8a7a7eb7"
       "5e7be6fb2d138201d9c085c2a56e9aa10b936bb8cd2f4a11af5c145d8003b42ddb690d1b7d9a7aa4"
       "220000c03f0000804001000000030000004000000000000000800000000000000000010000000000"
       "00c40900000100000000000000020000000100000001"},
      {"round_done", encode(RoundDone{.round = 3, .attempt = 2, .state_hash = digest_of(3)}),
       "01030000000000000002000000030000000000000000000000000000000000000000000000000000"
       "00000000ee"},
      {"round_failed",
       encode(
           RoundFailed{.round = 1, .attempt = 1, .reason = "nan", .suspect = key(3).public_key()}),
       "01010000000000000001000000030000006e616e01c085c2a56e9aa10b936bb8cd2f4a11af5c145d"
       "8003b42ddb690d1b7d9a7aa422"},
      {"round_failed without a suspect",
       encode(RoundFailed{.round = 2, .attempt = 0, .reason = "timeout", .suspect = {}}),
       "010200000000000000000000000700000074696d656f757400"},
      {"misconduct_proof",
       encode(ProvenMisconduct{
           .proof = {.first =
                         sign_statement(key(1), "run", 3, 1, StatementKind::result, 0, Digest{1}),
                     .second = sign_statement(key(2), "run", 3, 1, StatementKind::result, 0,
                                              Digest{2})}}),
       "017b3ebc3b53735ba05b24def69f3ebd392f186be602a78ace86edba035713c40803000000000000"
       "00010000000100000000010000000000000000000000000000000000000000000000000000000000"
       "0000ae66f9caa7674157bac5d943325e16bb3e17c4104f51f6b317e92531603d07dd4052bf8126d5"
       "2ed92f242312b1980882936b8e29cec024f30aa971a294a48200b2ce8de779f8eaa591d5cf70c432"
       "db0d128e3a8a7a7eb75e7be6fb2d138201d903000000000000000100000001000000000200000000"
       "000000000000000000000000000000000000000000000000000000b4674a545ac7675db9701c9713"
       "8831ec6f84ffa90fa02da7ea4443eb7f9918a64bfac2acb8554b8fd41d9d59b17e199723cc6577f6"
       "04a454ef4f88e270fc7a04"},
      {"commit", encode(Commit{.round = 3, .attempt = 2, .state_hash = digest_of(5)}),
       "01030000000000000002000000050000000000000000000000000000000000000000000000000000"
       "00000000ee"},
      {"abort_round", encode(AbortRound{.round = 3, .attempt = 2, .reason = "late", .retry = true}),
       "01030000000000000002000000040000006c61746501"},
      {"resync",
       encode(Resync{.round = 4,
                     .state_hash = digest_of(4),
                     .donors = {{key(1).public_key(), "a:1"}, {key(2).public_key(), ""}},
                     .phase_ms = 1500}),
       "02040000000000000004000000000000000000000000000000000000000000000000000000000000"
       "ee020000007b3ebc3b53735ba05b24def69f3ebd392f186be602a78ace86edba035713c408030000"
       "00613a31b2ce8de779f8eaa591d5cf70c432db0d128e3a8a7a7eb75e7be6fb2d138201d900000000"
       "dc050000"},
      {"state_report", encode(StateReport{.round = 6, .state_hash = digest_of(6)}),
       "01060000000000000006000000000000000000000000000000000000000000000000000000000000"
       "ee"},
      {"misbehaviour_report",
       encode(MisbehaviourReport{.suspect = key(4).public_key(), .reason = "junk"}),
       "0144bdde40249ffd6f3e15fefbdb0981585720c3fec4ca7e3815e08eb4267a48cb040000006a756e"
       "6b"},
      {"run_ended", encode(RunEnded{.round = 60, .state_hash = digest_of(60), .kept = true}),
       "013c000000000000003c000000000000000000000000000000000000000000000000000000000000"
       "ee01"},
      {"view_request", encode(ViewRequest{}), "01"},
      {"view",
       encode_signed_view(View{.epoch = 7, .members = {member(1), member(2)}}, tracker, "run"),
       "020700000000000000020000007b3ebc3b53735ba05b24def69f3ebd392f186be602a78ace86edba"
       "035713c40803000000683a3101000000e803000000000000010000000000000001b2ce8de779f8ea"
       "a591d5cf70c432db0d128e3a8a7a7eb75e7be6fb2d138201d903000000683a3202000000d0070000"
       "0000000002000000000000000276c7b2ebe27c0ba4cef71b0d0da5d84736f41bf9662813f8a30ea7"
       "724aafc1486e4699c32a40829376e0c0e311f44bbef0415386a0d8bd4caee54c72042bb500"},
      {"view_delta",
       encode_signed_view_delta(ViewDelta{.base_epoch = 7,
                                          .epoch = 8,
                                          .removed = {key(5).public_key()},
                                          .changed = {member(4)},
                                          .removed_from_round = 12,
                                          .members_digest = digest_of(8)},
                                tracker, "run"),
       "020700000000000000080000000000000001000000540607b703692cb134cfd923b04fbc8c98b155"
       "313ffb4ceccc5b27c4a04c4ff00100000044bdde40249ffd6f3e15fefbdb0981585720c3fec4ca7e"
       "3815e08eb4267a48cb03000000683a3404000000a00f0000000000000400000000000000010c0000"
       "000000000008000000000000000000000000000000000000000000000000000000000000ee0acc38"
       "3c707a06cc1f960855e47fc4a38ecaa91242d20d726e39d693eaf27d4c374053454ae211ede06e7d"
       "e8f97e0f741bfacd64d6cf03e3dd4b91943ced0503"},
  };
}

TEST(TrackerMessagesGolden, EveryMessageIsEncodedAsBefore) {
  for (const Golden& g : goldens()) EXPECT_EQ(hex(g.body), g.hex) << g.name;
}

// Each pinned body decodes (by the decoders that take its version and layout) to a message that
// encodes to the same bytes: the decoders read every field the encoders write, in their order.
TEST(TrackerMessagesGolden, EveryBodyDecodesToAMessageThatEncodesToTheSameBytes) {
  const auto tracker = key(200);
  for (const Golden& g : goldens()) {
    const std::string_view name = g.name;
    if (name == "view") {
      const View v = open_signed_view(g.body, tracker.public_key(), "run");
      EXPECT_EQ(hex(encode_signed_view(v, tracker, "run")), g.hex);
      continue;
    }
    if (name == "view_delta") {
      const ViewDelta d = open_signed_view_delta(g.body, tracker.public_key(), "run");
      EXPECT_EQ(hex(encode_signed_view_delta(d, tracker, "run")), g.hex);
      continue;
    }
    int decoded = 0;
    for_each_type<TrackerMessages>([&]<typename M>() {
      try {
        const M m = decode<M>(g.body);
        ++decoded;
        EXPECT_EQ(hex(encode(m)), g.hex) << g.name << " read as " << info(M::kType).name;
      } catch (const Error&) {
      }
    });
    EXPECT_GT(decoded, 0) << g.name;
  }
}

}  // namespace
}  // namespace loco::proto
