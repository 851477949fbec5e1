#pragma once
// Remembers the last signatures that verified, with the key and the message they were checked
// against, so that many verifiers of one signed message in one process pay for Ed25519 once: the
// simulator's thousand tracker clients are each handed the same signed view. A hit needs the same
// key, message and signature byte for byte, which verify() would accept again, so sharing a memo
// between verifiers changes no outcome. Not thread-safe: one per thread. A real peer holds one
// tracker client and has no use for it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "loco/secure/identity.hpp"

namespace loco::secure {

class SignatureMemo {
 public:
  explicit SignatureMemo(std::size_t capacity = 16);

  // verify(key, message, signature), answered from memory when these bytes verified before.
  bool verify(const PublicKey& key, std::span<const std::uint8_t> message,
              const Signature& signature);

  std::size_t hits() const { return hits_; }

 private:
  struct Verified {
    PublicKey key;
    Signature signature;
    std::vector<std::uint8_t> message;
  };
  std::deque<Verified> verified_;  // newest first; failures are not kept
  std::size_t capacity_;
  std::size_t hits_ = 0;
};

}  // namespace loco::secure
