#include "loco/net/relayed_links.hpp"

#include <fmt/format.h>

#include <utility>

#include "loco/core/error.hpp"

namespace loco::net {

struct RelayedLinks::Link {
  Attempt attempt;
  secure::PublicKey relay;
  std::unique_ptr<secure::SecureChannel> channel;
  std::deque<std::pair<proto::MessageType, std::vector<std::byte>>> waiting;  // for the handshake
  std::size_t waiting_bytes = 0;
  bool asked = false;  // a responder that asked for the handshake
  // The incoming message being put together.
  std::uint16_t in_type = 0;
  std::vector<std::byte> in;
};

RelayedLinks::RelayedLinks(const secure::KeyPair& identity, std::string run_id)
    : identity_(identity), run_id_(std::move(run_id)) {}

RelayedLinks::~RelayedLinks() = default;

RelayedLinks::Link* RelayedLinks::link_for(TimePoint now, const secure::PublicKey& relay,
                                           const proto::RelayHeader& header) {
  const Attempt attempt{header.round, header.attempt};
  const secure::PublicKey& peer = header.peer;
  auto it = links_.find(peer);
  if (it != links_.end() && it->second->attempt > attempt) return nullptr;  // stale
  if (it != links_.end() && it->second->attempt == attempt) return it->second.get();
  auto link = std::make_unique<Link>();
  link->attempt = attempt;
  link->relay = relay;
  const secure::Role role =
      identity_.public_key() < peer ? secure::Role::initiator : secure::Role::responder;
  link->channel = std::make_unique<secure::SecureChannel>(
      role, identity_,
      secure::ChannelConfig{.run_id = run_id_,
                            .max_message_bytes = proto::kMaxRelayPayloadBytes,
                            .max_frame_bytes = 1u << 20,
                            .handshake_timeout = std::chrono::seconds(30),
                            .idle_timeout = std::chrono::minutes(30),
                            .progress_timeout = std::chrono::seconds(60)},
      [peer](const secure::PublicKey& k) { return k == peer; },  // the other end, no one else
      fmt::format("peer {} through relay {}", secure::short_id(peer), secure::short_id(relay)), now,
      secure::fresh_ephemeral_seed());
  Link* raw = link.get();
  links_.insert_or_assign(peer, std::move(link));
  return raw;
}

void RelayedLinks::send(TimePoint now, const secure::PublicKey& relay,
                        const proto::RelayHeader& header, proto::MessageType type,
                        std::span<const std::byte> body) {
  Link* link = link_for(now, relay, header);
  if (link == nullptr) return;  // a message of an attempt this peer has left
  const secure::PublicKey peer = header.peer;
  try {
    if (link->channel->established()) {
      link->channel->send_message(now, static_cast<std::uint16_t>(type), body);
    } else {
      if (link->waiting_bytes + body.size() > kMaxWaitingBytes)
        throw Error(ErrorCategory::resource,
                    fmt::format("more than {} MiB waited for the handshake through the relay",
                                kMaxWaitingBytes >> 20));
      link->waiting_bytes += body.size();
      link->waiting.emplace_back(type, std::vector<std::byte>(body.begin(), body.end()));
      if (!link->asked && identity_.public_key() > peer) {
        link->asked = true;  // the initiator starts when it hears of the link
        transmits_.push_back(Transmit{
            .relay = link->relay,
            .body = proto::encode_relay_data(
                proto::RelayHeader{.round = header.round, .attempt = header.attempt, .peer = peer},
                {})});
      }
    }
    pump(now, peer, *link);
  } catch (const Error& e) {
    fail(peer, e.what());
  }
}

void RelayedLinks::on_relay_data(TimePoint now, const secure::PublicKey& relay,
                                 const proto::RelayData& data) {
  Link* link = link_for(now, relay, data.header);
  if (link == nullptr) return;
  const secure::PublicKey peer = data.header.peer;
  if (link->relay != relay) {
    fail(peer, fmt::format("bytes for this attempt came through {} and then {}",
                           secure::short_id(link->relay), secure::short_id(relay)));
    return;
  }
  try {
    // Each event is handled before the next bytes go in (its data points into the channel).
    secure::deliver(*link->channel, now, data.payload,
                    [&](const secure::ChannelEvent& e) { on_event(now, peer, *link, e); });
    pump(now, peer, *link);
  } catch (const Error& e) {
    fail(peer, e.what());
  }
}

void RelayedLinks::on_event(TimePoint now, const secure::PublicKey& peer, Link& link,
                            const secure::ChannelEvent& e) {
  using Kind = secure::ChannelEvent::Kind;
  if (e.kind == Kind::established) {
    for (auto& [type, body] : link.waiting)
      link.channel->send_message(now, static_cast<std::uint16_t>(type), body);
    link.waiting.clear();
    link.waiting_bytes = 0;
    return;
  }
  if (e.kind == Kind::closed) throw Error(ErrorCategory::network, "the other end closed the link");
  if (e.offset == 0) {
    // Checked before anything is buffered: a type peers exchange, within its limit.
    if (!proto::relayable(e.message_type, e.message_size))
      throw Error(ErrorCategory::protocol,
                  fmt::format("a relayed message of type {:#06x} and {} bytes", e.message_type,
                              e.message_size));
    link.in_type = e.message_type;
    link.in.clear();
    link.in.reserve(e.message_size);
  }
  link.in.insert(link.in.end(), e.data.begin(), e.data.end());
  if (e.last_chunk())
    messages_.push_back(Message{.from = peer,
                                .type = static_cast<proto::MessageType>(link.in_type),
                                .body = std::exchange(link.in, {})});
}

void RelayedLinks::pump(TimePoint now, const secure::PublicKey& peer, Link& link) {
  for (auto bytes = link.channel->poll_transmit(); !bytes.empty();
       bytes = link.channel->poll_transmit()) {
    const std::size_t n = std::min(bytes.size(), kMaxPayloadBytes);
    transmits_.push_back(
        Transmit{.relay = link.relay,
                 .body = proto::encode_relay_data(
                     proto::RelayHeader{
                         .round = link.attempt.first, .attempt = link.attempt.second, .peer = peer},
                     bytes.first(n))});
    link.channel->handle_transmitted(now, n);
  }
}

void RelayedLinks::on_timer(TimePoint now) {
  std::vector<secure::PublicKey> due;
  for (const auto& [peer, link] : links_)
    if (link->channel->poll_timeout() <= now) due.push_back(peer);
  for (const secure::PublicKey& peer : due) {
    try {
      links_.at(peer)->channel->handle_timeout(now);
      pump(now, peer, *links_.at(peer));
    } catch (const Error& e) {
      fail(peer, e.what());
    }
  }
}

TimePoint RelayedLinks::poll_timeout() const {
  TimePoint t = kNever;
  for (const auto& [peer, link] : links_) t = std::min(t, link->channel->poll_timeout());
  return t;
}

void RelayedLinks::fail(const secure::PublicKey& peer, const std::string& why) {
  links_.erase(peer);
  lost_.push_back(Lost{.peer = peer, .why = why});
}

std::optional<RelayedLinks::Transmit> RelayedLinks::poll_transmit() {
  if (transmits_.empty()) return std::nullopt;
  Transmit t = std::move(transmits_.front());
  transmits_.pop_front();
  return t;
}

std::optional<RelayedLinks::Message> RelayedLinks::poll_message() {
  if (messages_.empty()) return std::nullopt;
  Message m = std::move(messages_.front());
  messages_.pop_front();
  return m;
}

std::optional<RelayedLinks::Lost> RelayedLinks::poll_lost() {
  if (lost_.empty()) return std::nullopt;
  Lost l = std::move(lost_.front());
  lost_.pop_front();
  return l;
}

}  // namespace loco::net
