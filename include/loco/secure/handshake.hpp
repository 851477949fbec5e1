#pragma once
// The authenticated key exchange that opens every loco connection (see docs/PROTOCOL.md for the
// messages byte by byte). Sans-I/O: whole handshake messages in, messages out; no socket, no
// clock, no randomness of its own: the caller passes the seed of the ephemeral X25519 key
// (fresh_ephemeral_seed() in a real connection; a fixed seed in a fuzzer or a simulation, which
// then replays exactly).
//
// Three messages, all of fixed size:
//   1. initiator → responder: magic, run tag (bound to this connection's ephemeral key),
//      initiator's ephemeral key
//   2. responder → initiator: responder's ephemeral key, then encrypted: identity key, signature
//   3. initiator → responder: encrypted: identity key, signature
// Both signatures cover the transcript hash, which starts from the run id: a connection made for
// one run cannot complete, or be replayed, in another. Session keys come from the ephemeral
// Diffie-Hellman secret and the final transcript hash (forward secrecy).
//
// Call order:
//   initiator: poll_transmit() → message 1; handle_message(message 2); poll_transmit() →
//              message 3; done() is now true.
//   responder: handle_message(message 1); poll_transmit() → message 2; handle_message(message 3);
//              done() is now true.
// next_message_size() says how many bytes the next handle_message() takes (0: none expected).
// An extra poll_transmit() returns nothing and is harmless. handle_message() throws loco::Error
// (crypto: authentication failed or identity not accepted; protocol: wrong magic or run), after
// which the handshake is dead and must be discarded.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/secure/identity.hpp"

namespace loco::secure {

enum class Role { initiator, responder };

// The caller's admission rule: true when `identity` may talk to us (the tracker's pinned key; a
// member of the current view).
using AcceptIdentity = std::function<bool(const PublicKey& identity)>;

using SymmetricKey = std::array<std::uint8_t, 32>;

// The secret from which a handshake derives its ephemeral X25519 key pair. Never reuse one: two
// connections with the same seed have the same ephemeral key.
using EphemeralSeed = std::array<std::uint8_t, 32>;

// 32 bytes from libsodium's CSPRNG, for a real connection's handshake.
EphemeralSeed fresh_ephemeral_seed();

struct SessionKeys {
  SymmetricKey send{};
  SymmetricKey receive{};
};

class Handshake {
 public:
  static constexpr std::size_t kMessage1Bytes = 72;
  static constexpr std::size_t kMessage2Bytes = 144;
  static constexpr std::size_t kMessage3Bytes = 112;

  // `peer_label` names the other end in error messages until its identity is known (an address).
  // The ephemeral key comes from `ephemeral_seed`, which the handshake wipes from its own memory
  // once used (the caller wipes its copy).
  Handshake(Role role, const KeyPair& identity, std::string_view run_id, AcceptIdentity accept,
            std::string peer_label, const EphemeralSeed& ephemeral_seed);
  Handshake(const Handshake&) = delete;
  Handshake& operator=(const Handshake&) = delete;
  ~Handshake();  // wipes the ephemeral secret and keys

  std::size_t next_message_size() const;
  void handle_message(std::span<const std::uint8_t> message);
  std::optional<std::vector<std::uint8_t>> poll_transmit();

  bool done() const { return step_ == Step::done; }
  const PublicKey& peer_identity() const;   // after done()
  const SessionKeys& session_keys() const;  // after done()

 private:
  enum class Step { send_1, await_1, await_2, send_2, send_3, await_3, done, failed };

  std::array<std::uint8_t, 32> run_tag(std::span<const std::uint8_t, 32> initiator_ephemeral) const;
  void handle_message_1(std::span<const std::uint8_t> message);
  void handle_message_2(std::span<const std::uint8_t> message);
  void handle_message_3(std::span<const std::uint8_t> message);
  std::vector<std::uint8_t> make_message_2();
  std::vector<std::uint8_t> make_message_3();
  void agree_shared_secret(std::span<const std::uint8_t, 32> peer_ephemeral);
  void admit(const PublicKey& peer, std::span<const std::uint8_t> signed_transcript,
             const Signature& signature, std::string_view peer_role);
  void derive_session_keys();
  [[noreturn]] void fail(ErrorCategory category, const std::string& what);

  Role role_;
  const KeyPair& identity_;
  AcceptIdentity accept_;
  std::string peer_label_;
  Step step_;
  std::array<std::uint8_t, 32> transcript_{};  // running hash h
  std::array<std::uint8_t, 32> run_key_{};     // keys the run tag: H("loco run tag" ‖ h0)
  std::array<std::uint8_t, 32> ephemeral_public_{};
  std::array<std::uint8_t, 32> ephemeral_secret_{};
  std::array<std::uint8_t, 32> shared_secret_{};
  PublicKey peer_identity_{};
  SessionKeys keys_{};
};

}  // namespace loco::secure
