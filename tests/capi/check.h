/* The C API tests' one assertion: CHECK(condition, printf-style message) counts a failure and goes
 * on; a test program's main returns g_failures != 0. One per test program (a static). */
#ifndef LOCO_TESTS_CAPI_CHECK_H
#define LOCO_TESTS_CAPI_CHECK_H

#include <stdio.h>

static int g_failures = 0;

#define CHECK(condition, ...)                                                \
  do {                                                                       \
    if (!(condition)) {                                                      \
      fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                          \
      fprintf(stderr, "\n");                                                 \
      ++g_failures;                                                          \
    }                                                                        \
  } while (0)

#endif
