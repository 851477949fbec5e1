#pragma once
// Messages of a collective this member has not started yet: a faster member heard of the group
// (or of the next attempt) first and sent its part, once. They wait here, by the (round, attempt)
// they belong to, until this member starts that collective; at most `capacity` of them, so a peer
// cannot make another hold unbounded memory.
//
// take(current) returns the messages of `current` in arrival order, keeps those of later
// collectives (a member may be an attempt ahead: it heard of this attempt's abort and the next
// group before this member heard of this group), and forgets earlier ones.

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "loco/proto/message_type.hpp"
#include "loco/proto/round_formation.hpp"

namespace loco::proto {

class EarlyMessages {
 public:
  using Id = std::pair<std::uint64_t, std::uint32_t>;  // (round, attempt)
  struct Message {
    Id id;
    PeerKey from;
    MessageType type;
    std::vector<std::byte> body;
  };

  explicit EarlyMessages(std::size_t capacity) : capacity_(capacity) {}

  // Keeps a copy of `body`; false (dropped) when `capacity` messages wait already.
  bool keep(Id id, const PeerKey& from, MessageType type, std::span<const std::byte> body);
  std::vector<Message> take(Id current);
  std::size_t size() const { return waiting_.size(); }

 private:
  std::size_t capacity_;
  std::vector<Message> waiting_;
};

}  // namespace loco::proto
