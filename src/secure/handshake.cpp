#include "loco/secure/handshake.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/sodium_init.hpp"

namespace loco::secure {
namespace {

using Hash = std::array<std::uint8_t, 32>;
using Bytes = std::vector<std::uint8_t>;

constexpr std::array<std::uint8_t, 8> kMagic = {'l', 'o', 'c', 'o', '-', 'h', 's', '1'};
constexpr std::size_t kSealedIdentityBytes = 32 + 64 + crypto_aead_xchacha20poly1305_ietf_ABYTES;
static_assert(Handshake::kMessage1Bytes == 8 + 32 + 32);
static_assert(Handshake::kMessage2Bytes == 32 + kSealedIdentityBytes);
static_assert(Handshake::kMessage3Bytes == kSealedIdentityBytes);

std::span<const std::uint8_t> as_u8(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

// BLAKE2b-256 over the concatenation of `parts` into `out`, keyed when `key` is not empty. The
// hash state (which holds the key) is wiped.
void hash_to(std::span<std::uint8_t, 32> out,
             std::initializer_list<std::span<const std::uint8_t>> parts,
             std::span<const std::uint8_t> key = {}) {
  crypto_generichash_state state;
  crypto_generichash_init(&state, key.data(), key.size(), 32);
  for (auto part : parts) crypto_generichash_update(&state, part.data(), part.size());
  crypto_generichash_final(&state, out.data(), out.size());
  sodium_memzero(&state, sizeof state);
}

Hash hash(std::initializer_list<std::span<const std::uint8_t>> parts,
          std::span<const std::uint8_t> key = {}) {
  Hash out{};
  hash_to(out, parts, key);
  return out;
}

// A derived key that wipes itself when it goes out of scope (message keys, direction keys).
struct SecretHash {
  Hash bytes{};
  SecretHash() = default;
  SecretHash(const SecretHash&) = delete;
  SecretHash& operator=(const SecretHash&) = delete;
  ~SecretHash() { sodium_memzero(bytes.data(), bytes.size()); }
};

void kdf(const Hash& secret, const Hash& transcript, std::string_view label, SecretHash& out) {
  hash_to(out.bytes, {as_u8(label), transcript}, secret);
}

// The bytes an identity key signs: role ‖ transcript hash ‖ the signer's own identity key (so a
// signature cannot be presented under another identity).
Bytes signed_transcript(std::string_view role, const Hash& transcript, const PublicKey& signer) {
  Bytes out(role.size() + transcript.size() + signer.bytes.size());
  std::memcpy(out.data(), role.data(), role.size());
  std::memcpy(out.data() + role.size(), transcript.data(), transcript.size());
  std::memcpy(out.data() + role.size() + transcript.size(), signer.bytes.data(),
              signer.bytes.size());
  return out;
}

// identity ‖ signature, encrypted under a single-use key with the transcript as associated data.
Bytes seal_identity(const KeyPair& identity, const Signature& signature, const Hash& key,
                    const Hash& transcript) {
  Bytes plain(identity.public_key().bytes.begin(), identity.public_key().bytes.end());
  plain.insert(plain.end(), signature.begin(), signature.end());
  Bytes sealed(kSealedIdentityBytes);
  const std::array<std::uint8_t, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES> nonce{};
  crypto_aead_xchacha20poly1305_ietf_encrypt(sealed.data(), nullptr, plain.data(), plain.size(),
                                             transcript.data(), transcript.size(), nullptr,
                                             nonce.data(), key.data());
  return sealed;
}

bool open_identity(std::span<const std::uint8_t> sealed, const Hash& key, const Hash& transcript,
                   PublicKey& identity, Signature& signature) {
  std::array<std::uint8_t, 96> plain{};
  const std::array<std::uint8_t, crypto_aead_xchacha20poly1305_ietf_NPUBBYTES> nonce{};
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain.data(), nullptr, nullptr, sealed.data(),
                                                 sealed.size(), transcript.data(),
                                                 transcript.size(), nonce.data(), key.data()) != 0)
    return false;
  std::copy_n(plain.begin(), 32, identity.bytes.begin());
  std::copy_n(plain.begin() + 32, 64, signature.begin());
  return true;
}

}  // namespace

EphemeralSeed fresh_ephemeral_seed() {
  ensure_sodium_initialized();
  EphemeralSeed seed{};
  randombytes_buf(seed.data(), seed.size());
  return seed;
}

Handshake::Handshake(Role role, const KeyPair& identity, std::string_view run_id,
                     AcceptIdentity accept, std::string peer_label,
                     const EphemeralSeed& ephemeral_seed)
    : role_(role),
      identity_(identity),
      accept_(std::move(accept)),
      peer_label_(std::move(peer_label)),
      step_(role == Role::initiator ? Step::send_1 : Step::await_1) {
  ensure_sodium_initialized();
  LOCO_ASSERT(accept_, "a handshake needs an identity admission rule");
  std::array<std::uint8_t, 8> length_bytes{};
  store_le(reinterpret_cast<std::byte*>(length_bytes.data()), std::uint64_t{run_id.size()});
  transcript_ = hash({as_u8("loco handshake v1"), length_bytes, as_u8(run_id)});
  run_key_ = hash({as_u8("loco run tag"), transcript_});
  crypto_box_seed_keypair(ephemeral_public_.data(), ephemeral_secret_.data(),
                          ephemeral_seed.data());
}

// The run tag is a MAC of the initiator's ephemeral key under a key derived from the run id, so
// it differs on every connection: an observer cannot link two connections of one run by their
// tags, nor precompute tags for likely run ids. (Whoever guesses the run id can still check a
// recorded tag against the guess: a run id that must stay secret must be hard to guess.)
std::array<std::uint8_t, 32> Handshake::run_tag(
    std::span<const std::uint8_t, 32> initiator_ephemeral) const {
  return hash({as_u8("loco run tag v2"), initiator_ephemeral}, run_key_);
}

Handshake::~Handshake() {
  sodium_memzero(ephemeral_secret_.data(), ephemeral_secret_.size());
  sodium_memzero(shared_secret_.data(), shared_secret_.size());
  sodium_memzero(run_key_.data(), run_key_.size());
  sodium_memzero(&keys_, sizeof keys_);
}

std::size_t Handshake::next_message_size() const {
  switch (step_) {
    case Step::await_1: return kMessage1Bytes;
    case Step::await_2: return kMessage2Bytes;
    case Step::await_3: return kMessage3Bytes;
    default: return 0;
  }
}

void Handshake::fail(ErrorCategory category, const std::string& what) {
  step_ = Step::failed;
  throw Error(category, fmt::format("handshake with {}: {}", peer_label_, what));
}

void Handshake::handle_message(std::span<const std::uint8_t> message) {
  LOCO_ASSERT(message.size() == next_message_size() && message.size() > 0,
              "handle_message() takes exactly next_message_size() bytes");
  switch (step_) {
    case Step::await_1: handle_message_1(message); break;
    case Step::await_2: handle_message_2(message); break;
    case Step::await_3: handle_message_3(message); break;
    default: LOCO_ASSERT(false, "no handshake message expected");
  }
}

std::optional<std::vector<std::uint8_t>> Handshake::poll_transmit() {
  switch (step_) {
    case Step::send_1: {
      Bytes message(kMagic.begin(), kMagic.end());
      const auto tag = run_tag(ephemeral_public_);
      message.insert(message.end(), tag.begin(), tag.end());
      message.insert(message.end(), ephemeral_public_.begin(), ephemeral_public_.end());
      transcript_ = hash({transcript_, message});
      step_ = Step::await_2;
      return message;
    }
    case Step::send_2: step_ = Step::await_3; return make_message_2();
    case Step::send_3: step_ = Step::done; return make_message_3();
    default: return std::nullopt;
  }
}

void Handshake::handle_message_1(std::span<const std::uint8_t> message) {
  if (!std::equal(kMagic.begin(), kMagic.end(), message.begin()))
    fail(ErrorCategory::protocol, "not a loco v1 handshake (wrong magic bytes)");
  const auto expected_tag = run_tag(message.subspan<40, 32>());
  if (sodium_memcmp(message.data() + 8, expected_tag.data(), expected_tag.size()) != 0)
    fail(ErrorCategory::protocol,
         "the other end belongs to another run (run id differs); check [run] id (--run.id) on "
         "both ends");
  transcript_ = hash({transcript_, message});
  agree_shared_secret(message.subspan<40, 32>());
  step_ = Step::send_2;
}

std::vector<std::uint8_t> Handshake::make_message_2() {
  // h2 = H(h1 ‖ e_r); the responder signs h2 and seals its identity under a key from (ss, h2).
  transcript_ = hash({transcript_, ephemeral_public_});
  const Signature signature =
      identity_.sign(signed_transcript("responder", transcript_, identity_.public_key()));
  SecretHash key;
  kdf(shared_secret_, transcript_, "message 2", key);
  const Bytes sealed = seal_identity(identity_, signature, key.bytes, transcript_);
  Bytes message(ephemeral_public_.begin(), ephemeral_public_.end());
  message.insert(message.end(), sealed.begin(), sealed.end());
  transcript_ = hash({transcript_, sealed});
  return message;
}

void Handshake::handle_message_2(std::span<const std::uint8_t> message) {
  agree_shared_secret(message.subspan<0, 32>());
  transcript_ = hash({transcript_, message.first(32)});
  const auto sealed = message.subspan(32);
  PublicKey peer;
  Signature signature{};
  SecretHash key;
  kdf(shared_secret_, transcript_, "message 2", key);
  if (!open_identity(sealed, key.bytes, transcript_, peer, signature))
    fail(ErrorCategory::crypto,
         "message 2 does not authenticate: the other end is in another run or the bytes were "
         "altered");
  admit(peer, signed_transcript("responder", transcript_, peer), signature, "responder");
  transcript_ = hash({transcript_, sealed});
  step_ = Step::send_3;
}

std::vector<std::uint8_t> Handshake::make_message_3() {
  const Signature signature =
      identity_.sign(signed_transcript("initiator", transcript_, identity_.public_key()));
  SecretHash key;
  kdf(shared_secret_, transcript_, "message 3", key);
  Bytes message = seal_identity(identity_, signature, key.bytes, transcript_);
  transcript_ = hash({transcript_, message});
  derive_session_keys();
  return message;
}

void Handshake::handle_message_3(std::span<const std::uint8_t> message) {
  PublicKey peer;
  Signature signature{};
  SecretHash key;
  kdf(shared_secret_, transcript_, "message 3", key);
  if (!open_identity(message, key.bytes, transcript_, peer, signature))
    fail(ErrorCategory::crypto, "message 3 does not authenticate: the bytes were altered");
  admit(peer, signed_transcript("initiator", transcript_, peer), signature, "initiator");
  transcript_ = hash({transcript_, message});
  derive_session_keys();
  step_ = Step::done;
}

void Handshake::agree_shared_secret(std::span<const std::uint8_t, 32> peer_ephemeral) {
  // crypto_scalarmult refuses low-order points (an all-zero shared secret).
  if (crypto_scalarmult(shared_secret_.data(), ephemeral_secret_.data(), peer_ephemeral.data()) !=
      0)
    fail(ErrorCategory::crypto, "the other end sent an invalid ephemeral key");
}

void Handshake::admit(const PublicKey& peer, std::span<const std::uint8_t> signed_bytes,
                      const Signature& signature, std::string_view peer_role) {
  if (!verify(peer, signed_bytes, signature))
    fail(ErrorCategory::crypto, fmt::format("the {}'s signature over the handshake does not "
                                            "verify",
                                            peer_role));
  if (!accept_(peer))
    fail(ErrorCategory::crypto,
         fmt::format("identity {} (peer id {}) is not accepted here (not the pinned key / not a "
                     "member of the current view)",
                     to_hex(peer), short_id(peer)));
  peer_identity_ = peer;
}

void Handshake::derive_session_keys() {
  SecretHash to_responder, to_initiator;
  kdf(shared_secret_, transcript_, "initiator to responder", to_responder);
  kdf(shared_secret_, transcript_, "responder to initiator", to_initiator);
  keys_.send = role_ == Role::initiator ? to_responder.bytes : to_initiator.bytes;
  keys_.receive = role_ == Role::initiator ? to_initiator.bytes : to_responder.bytes;
  sodium_memzero(shared_secret_.data(), shared_secret_.size());
  sodium_memzero(ephemeral_secret_.data(), ephemeral_secret_.size());
}

const PublicKey& Handshake::peer_identity() const {
  LOCO_ASSERT(done(), "the peer's identity is known only after the handshake");
  return peer_identity_;
}

const SessionKeys& Handshake::session_keys() const {
  LOCO_ASSERT(done(), "session keys exist only after the handshake");
  return keys_;
}

}  // namespace loco::secure
