#include "loco/secure/signature_memo.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::secure {

SignatureMemo::SignatureMemo(std::size_t capacity) : capacity_(capacity) {
  LOCO_ASSERT(capacity > 0, "a signature memo keeps at least one signature");
}

bool SignatureMemo::verify(const PublicKey& key, std::span<const std::uint8_t> message,
                           const Signature& signature) {
  for (const Verified& v : verified_) {
    if (v.signature == signature && v.key == key && std::ranges::equal(v.message, message)) {
      ++hits_;
      return true;
    }
  }
  if (!secure::verify(key, message, signature)) return false;
  if (verified_.size() == capacity_) verified_.pop_back();
  verified_.push_front(Verified{key, signature, {message.begin(), message.end()}});
  return true;
}

}  // namespace loco::secure
