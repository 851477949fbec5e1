/* What every C API test program has (one each: statics): CHECK(condition, printf-style message),
 * which counts a failure and goes on (main returns g_failures != 0), and the program's folder
 * g_dir (main makes it) with a file written into it. */
#ifndef LOCO_TESTS_CAPI_CHECK_H
#define LOCO_TESTS_CAPI_CHECK_H

#include <stdio.h>
#include <stdlib.h>

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

static char g_dir[256];

static void path_in_dir(char* out, size_t size, const char* name) {
  snprintf(out, size, "%s/%s", g_dir, name);
}

static void write_file(const char* name, const char* text) {
  char path[512];
  path_in_dir(path, sizeof path, name);
  FILE* f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(1);
  }
}

#endif
