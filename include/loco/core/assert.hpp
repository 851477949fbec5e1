#pragma once
// Invariant checks. A failed LOCO_ASSERT is a bug in loco, not bad input: it prints where and
// why, then aborts. LOCO_DEBUG_ASSERT compiles away in Release builds (use it on hot paths).

namespace loco::detail {
[[noreturn]] void assert_failed(const char* expr, const char* message, const char* file, int line);
}  // namespace loco::detail

#define LOCO_ASSERT(cond, message)                                         \
  do {                                                                     \
    if (!(cond)) [[unlikely]]                                              \
      ::loco::detail::assert_failed(#cond, (message), __FILE__, __LINE__); \
  } while (false)

#ifdef NDEBUG
#define LOCO_DEBUG_ASSERT(cond, message) \
  do {                                   \
  } while (false)
#else
#define LOCO_DEBUG_ASSERT(cond, message) LOCO_ASSERT(cond, message)
#endif
