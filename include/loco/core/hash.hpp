#pragma once
// BLAKE2b-256 (libsodium's crypto_generichash) over byte spans, float spans and arenas.
// Floats are hashed as their little-endian IEEE-754 bytes, so equal bits give equal digests on
// every machine loco supports.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace loco {

class Arena;

using Digest = std::array<std::uint8_t, 32>;

// Incremental hasher: update() any number of times, then finish() once.
class Blake2b {
 public:
  Blake2b();
  Blake2b& update(std::span<const std::byte> bytes);
  Blake2b& update(std::span<const float> values);
  Blake2b& update_u64(std::uint64_t value);  // as 8 little-endian bytes
  Digest finish();

 private:
  alignas(64) std::array<unsigned char, 384> state_;  // crypto_generichash_state, opaque here
  bool finished_ = false;
};

Digest blake2b(std::span<const std::byte> bytes);
Digest blake2b(std::span<const float> values);
Digest blake2b(const Arena& arena);  // the whole buffer, padding included (always zero)

std::string to_hex(std::span<const std::uint8_t> bytes);
inline std::string to_hex(const Digest& digest) {
  return to_hex(std::span(digest));
}

}  // namespace loco
