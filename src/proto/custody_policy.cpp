#include "loco/proto/custody_policy.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::proto {

std::uint64_t next_custody_round(std::optional<std::uint64_t> last_stored, std::uint32_t every) {
  LOCO_ASSERT(every > 0, "custody every 0 rounds is custody off");
  if (!last_stored) return every;
  return (*last_stored / every + 1) * every;
}

bool custody_due(std::uint64_t committed_round, std::optional<std::uint64_t> last_stored,
                 std::uint32_t every, std::uint64_t final_round) {
  if (every == 0 || committed_round == 0) return false;
  if (final_round != 0 && committed_round >= final_round)
    return last_stored.value_or(0) < committed_round;
  return committed_round >= next_custody_round(last_stored, every);
}

std::vector<CustodyEntry> custody_to_prune(std::vector<CustodyEntry> stored, std::uint32_t keep,
                                           std::uint64_t max_bytes) {
  LOCO_ASSERT(keep > 0, "custody keeps at least one copy");
  std::sort(stored.begin(), stored.end(),
            [](const CustodyEntry& a, const CustodyEntry& b) { return a.round > b.round; });
  std::vector<CustodyEntry> pruned;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const bool within = i < keep && (i == 0 || total + stored[i].bytes <= max_bytes);
    if (within) {
      total += stored[i].bytes;
    } else {
      // Once one copy does not fit, no older one is kept either: the kept ones stay the newest.
      keep = static_cast<std::uint32_t>(i);
      pruned.push_back(stored[i]);
    }
  }
  std::reverse(pruned.begin(), pruned.end());
  return pruned;
}

StateSource settle_state(std::span<const HeldState> held, std::optional<CustodyEntry> custody) {
  LOCO_ASSERT(!held.empty(), "settling needs at least one live member");
  const auto older = [](const HeldState& a, const HeldState& b) {
    if (a.round != b.round) return a.round < b.round;
    if (a.holders != b.holders) return a.holders < b.holders;
    return a.hash > b.hash;  // among equals the smaller hash is the newest, so the choice is fixed
  };
  const HeldState& best = *std::max_element(held.begin(), held.end(), older);
  if (custody && custody->round >= best.round)
    return StateSource{.round = custody->round, .hash = custody->state_hash, .custody = true};
  return StateSource{.round = best.round, .hash = best.hash, .custody = false};
}

}  // namespace loco::proto
