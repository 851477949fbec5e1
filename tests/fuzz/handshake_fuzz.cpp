// Fuzz target: untrusted bytes into both ends of a fresh secure channel during the handshake
// (loco/secure/handshake.hpp through secure_channel.hpp). The input is what the other end sent.
// Seeds: a real transcript (the initiator's and the responder's bytes of one connection). Both
// ends draw their ephemeral keys from fixed seeds, so a seed transcript completes the handshake
// again in every run and its mutations reach the frames after it.

#include <cstdint>

#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/secure/secure_channel.hpp"

namespace {

using loco::secure::ChannelConfig;
using loco::secure::ChannelEvent;
using loco::secure::KeyPair;
using loco::secure::PublicKey;
using loco::secure::Role;
using loco::secure::SecureChannel;

const KeyPair& initiator_key() {
  static const KeyPair key = KeyPair::from_seed(std::array<std::uint8_t, 32>{1});
  return key;
}
const KeyPair& responder_key() {
  static const KeyPair key = KeyPair::from_seed(std::array<std::uint8_t, 32>{2});
  return key;
}

ChannelConfig config() {
  ChannelConfig c;
  c.run_id = "fuzz-run";
  c.max_frame_bytes = 4096;
  c.max_message_bytes = 65536;
  return c;
}

SecureChannel make(Role role) {
  const auto accept_any = [](const PublicKey&) { return true; };
  const bool initiator = role == Role::initiator;
  return SecureChannel(role, initiator ? initiator_key() : responder_key(), config(), accept_any,
                       "fuzz", loco::TimePoint{},
                       loco::secure::EphemeralSeed{static_cast<std::uint8_t>(initiator ? 5 : 6)});
}

std::vector<std::uint8_t> take(SecureChannel& channel) {
  std::vector<std::uint8_t> out;
  for (auto bytes = channel.poll_transmit(); !bytes.empty(); bytes = channel.poll_transmit()) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
    out.insert(out.end(), p, p + bytes.size());
    channel.handle_transmitted(loco::TimePoint{}, bytes.size());
  }
  return out;
}

void feed(SecureChannel& channel, const std::uint8_t* data, std::size_t size) {
  try {
    loco::secure::deliver(channel, loco::TimePoint{}, std::as_bytes(std::span(data, size)),
                          [](const ChannelEvent&) {});
    channel.handle_eof();
  } catch (const loco::Error&) {
    // Refused with a typed error: the expected outcome for bytes from a stranger.
  }
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  // One real connection: handshake, a message each way, and the close frames.
  SecureChannel initiator = make(Role::initiator);
  SecureChannel responder = make(Role::responder);
  std::vector<std::uint8_t> from_initiator;
  std::vector<std::uint8_t> from_responder;
  const auto ignore = [](const ChannelEvent&) {};
  for (int round = 0; round < 3; ++round) {
    auto a = take(initiator);
    auto b = take(responder);
    loco::secure::deliver(responder, {}, std::as_bytes(std::span(a)), ignore);
    loco::secure::deliver(initiator, {}, std::as_bytes(std::span(b)), ignore);
    from_initiator.insert(from_initiator.end(), a.begin(), a.end());
    from_responder.insert(from_responder.end(), b.begin(), b.end());
  }
  const std::byte hello[] = {std::byte{'h'}, std::byte{'i'}};
  initiator.send_message({}, 1, hello);
  initiator.close({});
  responder.send_message({}, 2, hello);
  responder.close({});
  for (auto byte : take(initiator)) from_initiator.push_back(byte);
  for (auto byte : take(responder)) from_responder.push_back(byte);
  return {from_initiator, from_responder};
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SecureChannel responder = make(Role::responder);
  feed(responder, data, size);
  SecureChannel initiator = make(Role::initiator);
  take(initiator);  // message 1 is out; the input plays the responder
  feed(initiator, data, size);
  return 0;
}
