// PeerCore relays: the routes of the round's group that concern this peer, as one end of a
// relayed link or as its relay (relay_core.hpp, relay_plan.hpp).

#include <fmt/format.h>

#include "loco/core/error.hpp"
#include "loco/proto/peer_core.hpp"

namespace loco::proto {

void PeerCore::set_relays(const Group& group) {
  relay_of_.clear();
  std::vector<std::pair<PeerKey, PeerKey>> carried;
  for (const RelayRoute& r : group.relays) {  // indices checked by the decoder
    const PeerKey& a = group.members[r.a];
    const PeerKey& b = group.members[r.b];
    const PeerKey& via = group.members[r.via];
    if (a == config_.self) relay_of_[b] = via;
    if (b == config_.self) relay_of_[a] = via;
    if (via == config_.self) carried.emplace_back(a, b);
  }
  relay_.set_routes(group.round, group.attempt, carried);
  for (RelayCore::Held& h : relay_.take_released())  // sent before this peer heard of the group
    relay(h.from, h.header, h.payload);
}

void PeerCore::relay(const PeerKey& from, const RelayHeader& header,
                     std::span<const std::byte> payload) {
  const RelayCore::Verdict v = relay_.route(from, header, payload);
  if (v.action == RelayCore::Action::forward) {
    // One copy of the payload per hop.
    send(header.peer, MessageType::relay_data,
         encode_relay_data(
             RelayHeader{.round = header.round, .attempt = header.attempt, .peer = from}, payload));
  } else if (v.action == RelayCore::Action::refuse) {
    send(from, MessageType::relay_refused,
         encode(RelayRefused{.peer = header.peer, .reason = v.refusal}));
  }
}

std::optional<PeerKey> PeerCore::relay_of(const PeerKey& peer) const {
  const auto it = relay_of_.find(peer);
  if (it == relay_of_.end()) return std::nullopt;
  return it->second;
}

std::optional<RelayData> PeerCore::on_relay_data(const PeerKey& from,
                                                 std::span<const std::byte> body) {
  RelayData data = decode_relay_data(body);
  // A member measured unreachable is never a relay, only an end: the bytes are the sender's
  // (header.peer), for the driver to open. They may come before this peer's own group message
  // (the relay heard sooner): the collective keeps what is early (early_messages.hpp). Who sent
  // them is proved by the end-to-end channel, not by the relay's word.
  if (reachability_of(config_.self) == Reachability::unreachable) return data;
  relay(from, data.header, data.payload);
  return std::nullopt;
}

void PeerCore::on_relay_refused(TimePoint now, const PeerKey& from,
                                std::span<const std::byte> body) {
  const RelayRefused refused = decode_relay_refused(body);
  if (relay_of(refused.peer) != from) return;  // not a relay of this peer's: nothing to fail
  on_peer_lost(now, refused.peer, "the relay refused it: " + refused.reason);
}

}  // namespace loco::proto
