#pragma once
// The messages a driver holds for members that must open the link to this peer (link_direction.hpp:
// SendOn::their) until that link is there: one rule for both drivers, net::PeerMesh and the
// simulator's sim::PeerNode. Held in order, per member, within kMaxAwaitingMessages and
// kMaxAwaitingBytes; past either bound the member never dialled, and what was held for it is
// dropped. The bytes are this peer's own messages (already in memory), so a member that never
// dials cannot make it keep more than the bound.

#include <cstddef>
#include <deque>
#include <map>
#include <optional>

#include "loco/proto/link_direction.hpp"

namespace loco::proto {

template <typename Key, typename Message>
class AwaitingLinks {
 public:
  // What was held for a member when a message went past the bound.
  struct Overflow {
    std::size_t messages = 0;
    std::size_t bytes = 0;
  };

  // Holds `message` (`bytes` long) for `key`. Past a bound: drops everything held for `key`, this
  // message too, and returns how much was held; the driver then loses that member's link.
  std::optional<Overflow> hold(const Key& key, Message message, std::size_t bytes) {
    Held& held = held_[key];
    if (held.messages.size() >= kMaxAwaitingMessages || held.bytes + bytes > kMaxAwaitingBytes) {
      const Overflow overflow{.messages = held.messages.size(), .bytes = held.bytes};
      held_.erase(key);
      return overflow;
    }
    held.bytes += bytes;
    held.messages.push_back(std::move(message));
    return std::nullopt;
  }

  // The member's link is open: what waited for it, in the order it was held (none: empty).
  std::deque<Message> release(const Key& key) {
    auto held = held_.extract(key);
    return held ? std::move(held.mapped().messages) : std::deque<Message>{};
  }

  // The member's link is gone: nothing is held for it any more.
  void forget(const Key& key) { held_.erase(key); }

  bool holds(const Key& key) const { return held_.contains(key); }

 private:
  struct Held {
    std::deque<Message> messages;
    std::size_t bytes = 0;
  };
  std::map<Key, Held> held_;
};

}  // namespace loco::proto
