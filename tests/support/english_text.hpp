#pragma once
// A small English-like text for tokenizer and dataset tests: `lines` lines drawn from a fixed
// word list by a seeded generator, enough for SentencePiece to learn a few hundred pieces.

#include <cstdint>
#include <string>

#include "loco/core/rng.hpp"

namespace loco::test {

inline std::string english_text(std::size_t lines, std::uint64_t seed = 1) {
  static const char* const kWords[] = {
      "the",    "a",        "of",      "and",    "to",      "in",      "is",         "was",
      "river",  "mountain", "village", "winter", "summer",  "people",  "walked",     "slowly",
      "across", "bridge",   "under",   "quiet",  "morning", "light",   "children",   "played",
      "near",   "old",      "stone",   "houses", "where",   "bread",   "baked",      "every",
      "day",    "market",   "opened",  "before", "sunrise", "farmers", "brought",    "apples",
      "cheese", "honey",    "from",    "hills",  "beyond",  "forest",  "travellers", "stories"};
  constexpr std::size_t kCount = sizeof kWords / sizeof kWords[0];
  std::string text;
  for (std::size_t line = 0; line < lines; ++line) {
    const std::size_t words = 6 + counter_u64(seed, line, 0) % 10;
    for (std::size_t w = 0; w < words; ++w) {
      if (w > 0) text += ' ';
      text += kWords[counter_u64(seed, line, w + 1) % kCount];
    }
    text += ".\n";
  }
  return text;
}

}  // namespace loco::test
