#pragma once
// Σ v² of a float vector, in double: the norms a round checks (an update's, a received chunk's).
// Eight partial sums in a fixed order, so the compiler can vectorize the loop and the result is
// the same bits on every machine and thread count (a member's check and the evidence another
// member replays must agree: proto/unit_evidence.hpp). A value that is not finite makes the sum
// not finite (a finite float's square cannot overflow a double, nor can 2^32 of them).

#include <span>

namespace loco {

double sum_of_squares(std::span<const float> values);

}  // namespace loco
