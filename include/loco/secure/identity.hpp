#pragma once
// Ed25519 identities of peers and the tracker (libsodium), their key files, and peer ids.
//
// A key file is text with exactly three lines (no other format is accepted):
//   loco-ed25519-key v1
//   public <64 hex digits: the Ed25519 public key>
//   seed <64 hex digits: the 32-byte secret seed>
// It must be a regular file readable by its owner only (mode 0600 or 0400): a file that the group
// or others can read is refused, because the seed is the peer's identity.

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace loco::secure {

struct PublicKey {
  std::array<std::uint8_t, 32> bytes{};
  friend bool operator==(const PublicKey&, const PublicKey&) = default;
  friend auto operator<=>(const PublicKey&, const PublicKey&) = default;  // map keys, ring order
};

using Signature = std::array<std::uint8_t, 64>;

// A peer id is BLAKE2b-256("loco-peer-id" ‖ public key); logs show its first 12 hex digits.
struct PeerId {
  std::array<std::uint8_t, 32> bytes{};
  friend bool operator==(const PeerId&, const PeerId&) = default;
};

PeerId peer_id(const PublicKey& key);
std::string to_hex(const PublicKey& key);
std::string full_hex(const PeerId& id);
std::string short_id(const PeerId& id);            // 12 hex digits, for logs
std::string short_id(const PublicKey& key);        // short_id(peer_id(key))
PublicKey parse_public_key(std::string_view hex);  // 64 hex digits; throws Error(config)

class KeyPair {
 public:
  static KeyPair generate();  // from libsodium's CSPRNG
  static KeyPair from_seed(std::span<const std::uint8_t, 32> seed);

  KeyPair(const KeyPair& other);
  KeyPair& operator=(const KeyPair& other);
  ~KeyPair();  // wipes the secret key

  const PublicKey& public_key() const { return public_; }
  Signature sign(std::span<const std::uint8_t> message) const;

  friend void write_key_file(const std::filesystem::path& path, const KeyPair& key, bool overwrite);

 private:
  KeyPair() = default;
  PublicKey public_;
  std::array<std::uint8_t, 64> secret_{};  // libsodium's expanded form: seed ‖ public key
};

bool verify(const PublicKey& key, std::span<const std::uint8_t> message,
            const Signature& signature);

// Writes a key file with mode 0600. Refuses (Error(io)) to replace an existing file unless
// `overwrite` is set.
void write_key_file(const std::filesystem::path& path, const KeyPair& key, bool overwrite);

// Reads a key file; throws Error(config) for loose permissions or a malformed file and Error(io)
// when it cannot be read.
KeyPair read_key_file(const std::filesystem::path& path);

}  // namespace loco::secure
