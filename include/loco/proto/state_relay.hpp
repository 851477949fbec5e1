#pragma once
// State-transfer messages (state_request, state_manifest, state_refusal, chunk_request,
// state_chunk: proto/state_transfer.hpp) carried on the tracker link, for checkpoint custody: the
// tracker pulls its custody copy from one peer, and serves that copy to a peer when no live peer
// holds the run's state (docs/TRACKER.md, "Checkpoint custody"). The tracker link is the one
// connection a peer and the tracker share, so custody needs no second listener and no mesh entry.
//
//   state_to_tracker / state_to_peer body: u8 version ‖ u16 inner type ‖ the inner body
//
// decode_relay() checks the outer size and version, that the inner type is one of the five above,
// and that the inner body is within that type's own limit; the inner body is then decoded by the
// state-transfer core as if it had come over the mesh.

#include <span>
#include <vector>

#include "loco/proto/message_type.hpp"

namespace loco::proto {

struct StateRelay {
  MessageType inner{};
  std::span<const std::byte> body;  // a view into the decoded message
};

// True for the five state-transfer types.
bool is_state_transfer(MessageType type);
// Requests (state_request, chunk_request) go to a server; the rest answer a fetcher.
bool is_state_request(MessageType type);

// `outer` is state_to_tracker or state_to_peer; `inner` a state-transfer type.
std::vector<std::byte> encode_relay(MessageType outer, MessageType inner,
                                    std::span<const std::byte> body);
// Throws Error(format) naming the message.
StateRelay decode_relay(MessageType outer, std::span<const std::byte> body);

}  // namespace loco::proto
