#include "loco/core/hash.hpp"

#include <sodium.h>

#include <bit>

#include "loco/core/arena.hpp"
#include "loco/core/assert.hpp"
#include "loco/core/sodium_init.hpp"

namespace loco {

static_assert(std::endian::native == std::endian::little, "loco hashes floats as little-endian");
static_assert(sizeof(crypto_generichash_state) <= 384);
static_assert(crypto_generichash_BYTES == sizeof(Digest));

namespace {
crypto_generichash_state* as_state(std::array<unsigned char, 384>& storage) {
  return reinterpret_cast<crypto_generichash_state*>(storage.data());
}
}  // namespace

Blake2b::Blake2b() {
  ensure_sodium_initialized();
  crypto_generichash_init(as_state(state_), nullptr, 0, crypto_generichash_BYTES);
}

Blake2b& Blake2b::update(std::span<const std::byte> bytes) {
  LOCO_ASSERT(!finished_, "Blake2b::update after finish");
  crypto_generichash_update(as_state(state_), reinterpret_cast<const unsigned char*>(bytes.data()),
                            bytes.size());
  return *this;
}

Blake2b& Blake2b::update(std::span<const float> values) {
  return update(std::as_bytes(values));
}

Blake2b& Blake2b::update_u64(std::uint64_t value) {
  std::array<std::byte, 8> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(value >> (8 * i));
  }
  return update(bytes);
}

Digest Blake2b::finish() {
  LOCO_ASSERT(!finished_, "Blake2b::finish called twice");
  finished_ = true;
  Digest digest{};
  crypto_generichash_final(as_state(state_), digest.data(), digest.size());
  return digest;
}

Digest blake2b(std::span<const std::byte> bytes) {
  return Blake2b().update(bytes).finish();
}

Digest blake2b(std::span<const float> values) {
  return Blake2b().update(values).finish();
}

Digest blake2b(const Arena& arena) {
  return blake2b(arena.data());
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

}  // namespace loco
