#pragma once
// Ed25519 identities of peers and the tracker (libsodium), their key files, and peer ids.
//
// A key file is text with exactly three lines (no other format is accepted):
//   loco-ed25519-key v1
//   public <64 hex digits: the Ed25519 public key>
//   seed <64 hex digits: the 32-byte secret seed>
// It must be a regular file (not a symbolic link, FIFO or device) that belongs to the user running
// loco and that only its owner can access (mode 0600 or 0400): the seed is the identity.

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace loco::secure {

struct PublicKey {
  std::array<std::uint8_t, 32> bytes{};
  // Four words, inline: the defaulted comparison calls memcmp, and keys are compared for every
  // ring chunk received and sent (the sender against the predecessor, the next hop).
  friend bool operator==(const PublicKey& a, const PublicKey& b) {
    std::uint64_t differ = 0;
    for (std::size_t i = 0; i < a.bytes.size(); i += 8) differ |= word(a, i) ^ word(b, i);
    return differ == 0;
  }
  // The order of the bytes (map keys, ring order, views), compared eight at a time: membership
  // lookups compare keys millions of times a virtual hour in the simulator.
  friend std::strong_ordering operator<=>(const PublicKey& a, const PublicKey& b) {
    for (std::size_t i = 0; i < a.bytes.size(); i += 8) {
      const std::uint64_t x = big_endian_word(a.bytes.data() + i);
      const std::uint64_t y = big_endian_word(b.bytes.data() + i);
      if (x != y) return x <=> y;
    }
    return std::strong_ordering::equal;
  }

 private:
  static std::uint64_t word(const PublicKey& key, std::size_t at) {
    std::uint64_t w;
    std::memcpy(&w, key.bytes.data() + at, sizeof w);
    return w;
  }
  static std::uint64_t big_endian_word(const std::uint8_t* p) {
    std::uint64_t word = 0;
    for (int i = 0; i < 8; ++i) word = (word << 8) | p[i];
    return word;
  }
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

// Whose identity a key file holds. Messages about a bad file say which program makes a new one,
// and for the tracker that a new key means every peer must update its pinned key.
enum class KeyOwner { peer, tracker };

// Writes a key file with mode 0600: into a new temporary file beside `path`, synced, then renamed
// onto `path`, so a reader never sees half a key and a symbolic link at `path` is replaced, never
// followed. Refuses (Error(io)) if anything exists at `path`, a dangling link included, unless
// `overwrite` is set. On any failure the temporary file is removed; `path` changes only by the
// final rename.
void write_key_file(const std::filesystem::path& path, const KeyPair& key, bool overwrite);

// Reads a key file, opened once without following a symbolic link. Throws Error(config) for a
// link, a file that is not regular, belongs to another user, has loose permissions or is
// malformed, and Error(io) when it cannot be read. Text holding the seed lives only in memory
// that is wiped before this returns or throws.
KeyPair read_key_file(const std::filesystem::path& path, KeyOwner owner);

}  // namespace loco::secure
