#pragma once
// Two SecureChannels wired back to back in memory, for the channel tests and fuzz seeds.

#include <cstddef>
#include <string>
#include <vector>

#include "loco/secure/secure_channel.hpp"

namespace loco::secure::testing {

using Bytes = std::vector<std::byte>;

struct Received {
  std::uint16_t type = 0;
  Bytes bytes;
};

// Takes every queued outgoing frame off `channel`, one entry per frame (or handshake message).
inline std::vector<Bytes> drain_frames(SecureChannel& channel, TimePoint now) {
  std::vector<Bytes> frames;
  for (auto bytes = channel.poll_transmit(); !bytes.empty(); bytes = channel.poll_transmit()) {
    frames.emplace_back(bytes.begin(), bytes.end());
    channel.handle_transmitted(now, bytes.size());
  }
  return frames;
}

inline Bytes concat(const std::vector<Bytes>& frames) {
  Bytes out;
  for (const auto& f : frames) out.insert(out.end(), f.begin(), f.end());
  return out;
}

// Collects what a channel delivers: whole messages (assembled here) and the closed event.
struct Inbox {
  bool established = false;
  bool closed = false;
  std::vector<Received> messages;
  Bytes partial;

  void operator()(const ChannelEvent& event) {
    switch (event.kind) {
      case ChannelEvent::Kind::established: established = true; break;
      case ChannelEvent::Kind::closed: closed = true; break;
      case ChannelEvent::Kind::chunk:
        partial.insert(partial.end(), event.data.begin(), event.data.end());
        if (event.last_chunk()) {
          messages.push_back({event.message_type, std::move(partial)});
          partial.clear();
        }
        break;
    }
  }
};

struct ChannelPair {
  KeyPair initiator_key = KeyPair::generate();
  KeyPair responder_key = KeyPair::generate();
  ChannelConfig initiator_config;
  ChannelConfig responder_config;
  AcceptIdentity initiator_accepts;  // default: only responder_key
  AcceptIdentity responder_accepts;  // default: only initiator_key
  std::unique_ptr<SecureChannel> initiator;
  std::unique_ptr<SecureChannel> responder;
  Inbox initiator_inbox;
  Inbox responder_inbox;
  TimePoint now{};
  EphemeralSeed initiator_seed = fresh_ephemeral_seed();
  EphemeralSeed responder_seed = fresh_ephemeral_seed();

  ChannelPair() { initiator_config.run_id = responder_config.run_id = "run-1"; }

  void create() {
    const PublicKey responder_public = responder_key.public_key();
    const PublicKey initiator_public = initiator_key.public_key();
    if (!initiator_accepts)
      initiator_accepts = [responder_public](const PublicKey& k) { return k == responder_public; };
    if (!responder_accepts)
      responder_accepts = [initiator_public](const PublicKey& k) { return k == initiator_public; };
    initiator =
        std::make_unique<SecureChannel>(Role::initiator, initiator_key, initiator_config,
                                        initiator_accepts, "responder-addr", now, initiator_seed);
    responder =
        std::make_unique<SecureChannel>(Role::responder, responder_key, responder_config,
                                        responder_accepts, "initiator-addr", now, responder_seed);
  }

  // Moves bytes both ways until neither side has anything to send.
  void pump() {
    for (;;) {
      const Bytes to_responder = concat(drain_frames(*initiator, now));
      const Bytes to_initiator = concat(drain_frames(*responder, now));
      if (to_responder.empty() && to_initiator.empty()) return;
      deliver(*responder, now, to_responder, responder_inbox);
      deliver(*initiator, now, to_initiator, initiator_inbox);
    }
  }

  void connect() {
    create();
    pump();
  }
};

inline Bytes pattern(std::size_t size, std::uint8_t salt) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::byte>((i * 131 + salt) & 0xff);
  return out;
}

}  // namespace loco::secure::testing
