#include "loco/core/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace loco::detail {

void assert_failed(const char* expr, const char* message, const char* file, int line) {
  std::fprintf(stderr, "loco: invariant broken at %s:%d: %s (%s)\n", file, line, message, expr);
  std::abort();
}

}  // namespace loco::detail
