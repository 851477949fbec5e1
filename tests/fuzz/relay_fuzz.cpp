// Fuzz target: what a member may send as or to a relay (docs/PROTOCOL.md, "Relays"). The input is
// a relay_data or relay_refused body (first byte picks which): decoded (proto/relay_messages.hpp);
// a relay_data then goes through a relay's core (proto/relay_core.hpp, routes set for the pair
// the seeds name) and, as an end would take it, into the end-to-end channels
// (net/relayed_links.hpp), whose handshake and frames must refuse it with an Error, never crash.
// Seeds: a real relay_data of the first handshake message, an empty one, a relay_refused.

#include <array>
#include <cstdint>
#include <vector>

#include "fuzz_seeds.hpp"
#include "loco/core/error.hpp"
#include "loco/net/relayed_links.hpp"
#include "loco/proto/relay_core.hpp"
#include "loco/proto/relay_messages.hpp"

namespace {

using namespace loco;

secure::KeyPair fuzz_key(std::uint8_t n) {
  std::array<std::uint8_t, 32> seed{};
  seed[0] = n;
  return secure::KeyPair::from_seed(seed);
}

const secure::KeyPair& end_key() {
  static const secure::KeyPair k = fuzz_key(1);
  return k;
}
const secure::KeyPair& other_key() {
  static const secure::KeyPair k = fuzz_key(2);
  return k;
}
const secure::KeyPair& relay_key() {
  static const secure::KeyPair k = fuzz_key(3);
  return k;
}

std::vector<std::uint8_t> tagged(std::uint8_t tag, const std::vector<std::byte>& body) {
  std::vector<std::uint8_t> out{tag};
  for (const std::byte b : body) out.push_back(std::to_integer<std::uint8_t>(b));
  return out;
}

}  // namespace

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds() {
  // What the other end's initiator sends first, as the relay forwards it.
  net::RelayedLinks other(other_key(), "run-f");
  other.send(TimePoint{}, relay_key().public_key(),
             proto::RelayHeader{.round = 1, .attempt = 1, .peer = end_key().public_key()},
             proto::MessageType::ring_chunk, std::vector<std::byte>(64));
  std::vector<std::vector<std::uint8_t>> seeds;
  while (auto t = other.poll_transmit()) {
    proto::RelayData d = proto::decode_relay_data(t->body);
    d.header.peer = other_key().public_key();
    seeds.push_back(tagged(0, proto::encode_relay_data(d.header, d.payload)));
  }
  seeds.push_back(tagged(
      0, proto::encode_relay_data(
             proto::RelayHeader{.round = 1, .attempt = 1, .peer = other_key().public_key()}, {})));
  seeds.push_back(tagged(
      1, proto::encode(proto::RelayRefused{.peer = other_key().public_key(), .reason = "full"})));
  return seeds;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> body(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  try {
    if (data[0] % 2 == 1) {
      (void)proto::decode_relay_refused(body);
      return 0;
    }
    const proto::RelayData d = proto::decode_relay_data(body);
    proto::RelayCore relay(proto::RelayBudget{.max_pairs = 4, .max_bytes_per_attempt = 1 << 20});
    relay.set_routes(1, 1, {{end_key().public_key(), other_key().public_key()}});
    (void)relay.route(other_key().public_key(), d.header, d.payload);
    relay.set_routes(d.header.round, d.header.attempt, {});
    for (const auto& held : relay.take_released())
      (void)relay.route(held.from, held.header, held.payload);
    net::RelayedLinks end(end_key(), "run-f");
    end.on_relay_data(TimePoint{}, relay_key().public_key(), d);
    while (end.poll_transmit()) {
    }
    while (end.poll_message()) {
    }
    while (end.poll_lost()) {
    }
  } catch (const Error&) {
    // Refused: what a malformed body must come to.
  }
  return 0;
}
