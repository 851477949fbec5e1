#pragma once
// Rounds bounded by time (docs/STRATEGIES.md, "Rounds bounded by time"): each member trains as
// many steps as it manages before the round's deadline, and the group's mean weighs each member's
// update by the tokens it was trained on. A member's tokens are its claim (Ready::tokens): the
// tracker clamps the claims (weigh_tokens) and sends the result with the group (Group::tokens), so
// every member weighs with the tracker's numbers; the collective turns them into the factors each
// contribution counts for (contribution_weights).
//
// What a liar gets: a claim counts for at most max_ratio × the lower median m of the group's
// claims. At least ⌈(N + 1)/2⌉ members claim m or more, so one member's share of the weight is at
// most max_ratio / (max_ratio + ⌈(N + 1)/2⌉ − 1): with the default 2, 2/3 of a group of 2 or 3,
// 1/2 of 4 or 5, 1/3 of 8. Understating only lowers the liar's own share.

#include <cstdint>
#include <span>
#include <vector>

namespace loco::proto {

struct TokenWeighting {
  std::uint64_t step_tokens = 0;  // the tokens of one inner step (batch × context); 0: plain mean
  double max_ratio = 2;           // no member counts for more than this × the lower median claim
};

// The tokens each member counts for, in the order of `claims`: each claim rounded down to whole
// steps, at least one step and at most kMaxRoundTokens (tracker_messages.hpp), then at most
// max_ratio × the lower median of those. Empty when weighting is off (step_tokens 0).
std::vector<std::uint64_t> weigh_tokens(std::span<const std::uint64_t> claims,
                                        const TokenWeighting& weighting);

// weights[m] = N·tokens[m] / Σ tokens, the factor member m's update counts for in the group's mean
// (they sum to N, as N plain contributions do). Empty for no tokens (the plain mean).
std::vector<float> contribution_weights(std::span<const std::uint64_t> tokens);

}  // namespace loco::proto
