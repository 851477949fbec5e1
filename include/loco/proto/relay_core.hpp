#pragma once
// A reachable member's relaying, as a sans-I/O decision (docs/PROTOCOL.md, "Relays"): what it
// does with each relay_data it gets. The group message of each attempt names the pairs of
// unreachable members whose link goes through this member (Group::relays); set_routes() installs
// them and clear() drops them when the round is over for everyone. route() is asked for every
// relay_data that arrives:
//   - of the attempt routed now, for a routed pair, within budget: forward (to header.peer,
//     naming the sender);
//   - of that attempt, for a pair not routed here or past the budget: refuse (relay_refused back);
//   - of a later attempt (its group message has not reached this member yet: the tracker sends
//     it to every member at once, and some hear sooner): held, at most kMaxHeldMessages and
//     kMaxHeldBytes, then routed by the set_routes() of that attempt (take_released()); past
//     the bound: refused;
//   - of an earlier attempt: dropped (its ends have moved on).
// The budget is the member's own config: pairs at once, and payload bytes per attempt (0: no
// limit). Nothing here reads a clock or a socket; the driver sends what it is told.
//
// The relay sees only whose bytes go where and how many: the payload is the two ends' own secure
// channel (net/relayed_links.hpp), so it cannot read or change it unseen. What a relay that lies
// can do is drop, delay or refuse: the ends' link then fails, and they name the relay, not each
// other (peer_core_relay.cpp; docs/SECURITY.md, "Relays").

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loco/proto/relay_messages.hpp"
#include "loco/proto/round_formation.hpp"

namespace loco::proto {

struct RelayBudget {
  std::uint32_t max_pairs = 4;              // pairs relayed at once (what JoinRequest declares)
  std::uint64_t max_bytes_per_attempt = 0;  // payload bytes forwarded per attempt; 0: no limit
};

class RelayCore {
 public:
  static constexpr std::size_t kMaxHeldMessages = 256;
  static constexpr std::size_t kMaxHeldBytes = std::size_t{64} << 20;

  explicit RelayCore(RelayBudget budget) : budget_(budget) {}

  // The pairs this member relays in attempt `attempt` of `round`; those past max_pairs are
  // refused. Held messages of that attempt become take_released(); earlier ones are dropped.
  void set_routes(std::uint64_t round, std::uint32_t attempt,
                  const std::vector<std::pair<PeerKey, PeerKey>>& pairs);
  void clear();

  enum class Action { forward, refuse, held, dropped };
  struct Verdict {
    Action action = Action::dropped;
    std::string refusal;  // why, when refused
  };
  // `header.peer` is where the sender wants its bytes to go.
  Verdict route(const PeerKey& from, const RelayHeader& header, std::span<const std::byte> payload);

  struct Held {
    PeerKey from;
    RelayHeader header;
    std::vector<std::byte> payload;
  };
  // Held messages of the attempt set_routes() just installed: route() each again.
  std::vector<Held> take_released();

  const RelayBudget& budget() const { return budget_; }
  std::size_t pairs() const { return pairs_.size(); }
  std::uint64_t bytes_relayed() const { return bytes_relayed_; }
  std::uint64_t refused() const { return refused_; }
  std::size_t held_bytes() const { return held_bytes_; }

 private:
  using Attempt = std::pair<std::uint64_t, std::uint32_t>;
  static std::pair<PeerKey, PeerKey> ordered(const PeerKey& a, const PeerKey& b) {
    return a < b ? std::pair(a, b) : std::pair(b, a);
  }
  Verdict refuse(std::string why);

  RelayBudget budget_;
  Attempt current_{0, 0};  // (0, 0): none routed yet
  std::set<std::pair<PeerKey, PeerKey>> pairs_;
  std::uint64_t attempt_bytes_ = 0;
  std::deque<Held> held_;
  std::size_t held_bytes_ = 0;
  std::vector<Held> released_;
  std::uint64_t bytes_relayed_ = 0;  // over the process's life
  std::uint64_t refused_ = 0;
};

}  // namespace loco::proto
