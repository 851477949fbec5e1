#pragma once
// The end-to-end secure channels of a peer's relayed links (docs/PROTOCOL.md, "Relays"): two
// members that are both unreachable run a full secure::SecureChannel with each other (handshake
// with identity keys, each end checking the other's; AEAD frames with counters) and carry its
// bytes in relay_data messages through the relay their group names. The relay forwards opaque
// bytes: it cannot read them, and a byte it drops, reorders, replays or changes breaks the
// channel, which ends the link (poll_lost), and the core names the relay (peer_core_relay.cpp).
//
// Sans-I/O like the channel itself: no socket and no clock. The driver (swarm::SwarmSession)
// calls send() for each core transmit with Send::relayed set and on_relay_data() for each
// relay_data the core gives back, then drains poll_transmit() (relay_data bodies for the mesh),
// poll_message() (whole messages, to PeerCore::on_peer_message as the other end's) and
// poll_lost() (to PeerCore::on_peer_lost), and arms a timer for poll_timeout() that calls
// on_timer(). Extra polls are harmless.
//
// One channel per other end and attempt (RelayHeader's round and attempt), so a retry through
// another relay starts clean; a newer attempt's bytes replace an older channel, an older
// attempt's are ignored. The end with the smaller key initiates; the other, when it has something
// to send first, asks for the handshake with an empty payload. Messages wait for the handshake
// (at most kMaxWaitingBytes per link). Incoming messages are checked against the peer-to-peer
// table (type, size) at their first chunk, before anything is buffered for them.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "loco/core/time.hpp"
#include "loco/proto/message_type.hpp"
#include "loco/proto/relay_messages.hpp"
#include "loco/secure/secure_channel.hpp"

namespace loco::net {

class RelayedLinks {
 public:
  static constexpr std::size_t kMaxPayloadBytes = std::size_t{256} << 10;  // per relay_data
  static constexpr std::size_t kMaxWaitingBytes = std::size_t{64} << 20;

  // `identity` must outlive this object.
  RelayedLinks(const secure::KeyPair& identity, std::string run_id);
  ~RelayedLinks();

  void send(TimePoint now, const secure::PublicKey& relay, const proto::RelayHeader& header,
            proto::MessageType type, std::span<const std::byte> body);
  void on_relay_data(TimePoint now, const secure::PublicKey& relay, const proto::RelayData& data);
  void on_timer(TimePoint now);
  TimePoint poll_timeout() const;

  struct Transmit {
    secure::PublicKey relay;
    std::vector<std::byte> body;  // a relay_data body
  };
  struct Message {
    secure::PublicKey from;
    proto::MessageType type{};
    std::vector<std::byte> body;
  };
  struct Lost {
    secure::PublicKey peer;
    std::string why;
  };
  std::optional<Transmit> poll_transmit();
  std::optional<Message> poll_message();
  std::optional<Lost> poll_lost();

  std::size_t links() const { return links_.size(); }

 private:
  struct Link;
  using Attempt = std::pair<std::uint64_t, std::uint32_t>;

  // The link with `peer` for `header`'s attempt: the current one, a new one (replacing an older
  // attempt's), or null for an older attempt.
  Link* link_for(TimePoint now, const secure::PublicKey& relay, const proto::RelayHeader& header);
  void pump(TimePoint now, const secure::PublicKey& peer, Link& link);
  void on_event(TimePoint now, const secure::PublicKey& peer, Link& link,
                const secure::ChannelEvent& e);
  void fail(const secure::PublicKey& peer, const std::string& why);

  const secure::KeyPair& identity_;
  std::string run_id_;
  std::map<secure::PublicKey, std::unique_ptr<Link>> links_;
  std::deque<Transmit> transmits_;
  std::deque<Message> messages_;
  std::deque<Lost> lost_;
};

}  // namespace loco::net
