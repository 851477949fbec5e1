#include "loco/proto/relay_core.hpp"

#include <fmt/format.h>

namespace loco::proto {

void RelayCore::set_routes(std::uint64_t round, std::uint32_t attempt,
                           const std::vector<std::pair<PeerKey, PeerKey>>& pairs) {
  pairs_.clear();
  attempt_bytes_ = 0;
  current_ = {round, attempt};
  for (const auto& [a, b] : pairs) {
    if (pairs_.size() >= budget_.max_pairs) break;  // the rest are refused when they send
    pairs_.insert(ordered(a, b));
  }
  std::deque<Held> later;
  for (Held& h : held_) {
    const Attempt of{h.header.round, h.header.attempt};
    if (of == current_)
      released_.push_back(std::move(h));
    else if (of > current_)
      later.push_back(std::move(h));
  }
  held_ = std::move(later);
  held_bytes_ = 0;
  for (const Held& h : held_) held_bytes_ += h.payload.size();
}

void RelayCore::clear() {
  pairs_.clear();
  attempt_bytes_ = 0;
  held_.clear();
  held_bytes_ = 0;
  released_.clear();
}

std::vector<RelayCore::Held> RelayCore::take_released() {
  return std::exchange(released_, {});
}

RelayCore::Verdict RelayCore::refuse(std::string why) {
  ++refused_;
  return Verdict{.action = Action::refuse, .refusal = std::move(why)};
}

RelayCore::Verdict RelayCore::route(const PeerKey& from, const RelayHeader& header,
                                    std::span<const std::byte> payload) {
  const Attempt of{header.round, header.attempt};
  if (of < current_) return Verdict{.action = Action::dropped, .refusal = {}};
  if (of > current_) {
    if (held_.size() >= kMaxHeldMessages || held_bytes_ + payload.size() > kMaxHeldBytes)
      return refuse(
          fmt::format("this relay holds at most {} messages ({} MiB) for a group it has "
                      "not heard of yet",
                      kMaxHeldMessages, kMaxHeldBytes >> 20));
    held_.push_back(Held{.from = from,
                         .header = header,
                         .payload = std::vector<std::byte>(payload.begin(), payload.end())});
    held_bytes_ += payload.size();
    return Verdict{.action = Action::held, .refusal = {}};
  }
  if (!pairs_.contains(ordered(from, header.peer)))
    return refuse(
        pairs_.size() >= budget_.max_pairs
            ? fmt::format("this relay carries at most {} pairs at once", budget_.max_pairs)
            : std::string("this member does not relay that pair in this attempt"));
  if (budget_.max_bytes_per_attempt != 0 &&
      attempt_bytes_ + payload.size() > budget_.max_bytes_per_attempt)
    return refuse(fmt::format("this relay carries at most {} bytes per attempt",
                              budget_.max_bytes_per_attempt));
  attempt_bytes_ += payload.size();
  bytes_relayed_ += payload.size();
  return Verdict{.action = Action::forward, .refusal = {}};
}

}  // namespace loco::proto
