#pragma once
// Timing helpers shared by the benchmark programs (never used by tests: tests do not time).

#include <algorithm>
#include <chrono>
#include <string>

namespace loco::bench {

// Runs fn `repeats` times and returns the fastest run in seconds (the least disturbed by other
// work on a shared machine).
template <typename Fn>
double best_seconds(int repeats, Fn&& fn) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
  }
  return best;
}

// Keeps the optimiser from deleting a computation whose result is otherwise unused.
template <typename T>
void keep(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

}  // namespace loco::bench
