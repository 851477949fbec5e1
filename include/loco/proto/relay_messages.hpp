#pragma once
// The messages of a relayed link (docs/PROTOCOL.md, "Relays"): two members that are both
// unreachable talk through a reachable member of their group that the tracker's group message
// names (Group::relays). Each end sends `relay_data` to the relay naming the other end; the relay
// forwards it naming the sender instead. The payload is opaque to the relay: on the real network
// it is the bytes of the secure channel the two ends run with each other end to end
// (net/relayed_links.hpp), so the relay can drop or delay it but not read or change it unseen.
// A relay that will not carry a pair answers `relay_refused`, and the sender treats the link as
// failed because of the relay (relay_core.hpp).

#include <span>
#include <string>
#include <vector>

#include "loco/proto/message_type.hpp"
#include "loco/secure/identity.hpp"

namespace loco::proto {

// Bytes relay_data adds to its payload: version byte, round, attempt and a key.
inline constexpr std::size_t kRelayHeaderBytes = 1 + 8 + 4 + 32;
// The largest payload: any peer-to-peer message whole, with room for a frame's header.
inline constexpr std::size_t kMaxRelayPayloadBytes = (std::size_t{17} << 20) + 512;

// Whose link a relay_data belongs to: the attempt whose group named the relay (a relay that has
// not heard of that group yet holds it, relay_core.hpp) and the other end.
struct RelayHeader {
  std::uint64_t round = 0;
  std::uint32_t attempt = 0;
  secure::PublicKey peer;  // to the relay: the other end; from the relay: the sender
};

// A view into a received relay_data body: `payload` points into it.
struct RelayData {
  RelayHeader header;
  std::span<const std::byte> payload;
};

struct RelayRefused {
  secure::PublicKey peer;  // the end the relay will not carry this member's bytes to
  std::string reason;
};

std::vector<std::byte> encode_relay_data(const RelayHeader& header,
                                         std::span<const std::byte> payload);
// Checks the size against the type's limit and the version; allocates nothing.
RelayData decode_relay_data(std::span<const std::byte> body);

std::vector<std::byte> encode(const RelayRefused& m);
RelayRefused decode_relay_refused(std::span<const std::byte> body);

// Whether the end of a relayed link takes a message of `type` and `size` out of a payload,
// checked before anything of it is buffered: a type peers exchange, within its limit, and not
// one of a relay's own (relay_data, relay_refused), which no member relays. Both drivers' rule
// (net/relayed_links.hpp, sim/peer_node.hpp).
bool relayable(std::uint16_t type, std::size_t size);

// What the simulator puts in a payload (its links carry messages in the clear): the type, then
// the body. Throws Error(format) for a payload under two bytes.
std::vector<std::byte> encode_plain_payload(MessageType type, std::span<const std::byte> body);
std::pair<std::uint16_t, std::span<const std::byte>> decode_plain_payload(
    std::span<const std::byte> payload);

}  // namespace loco::proto
