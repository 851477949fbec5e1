/* A real loco-tracker process for the C API's test: started with the test's options, its
 * address and public key taken from the line it prints first, stopped by SIGTERM. */
#ifndef LOCO_TEST_TRACKER_PROCESS_H
#define LOCO_TEST_TRACKER_PROCESS_H

#include <sys/types.h>

typedef struct tracker_process {
  pid_t pid;
  int out;             /* its stdout, kept open (a closed pipe would kill it) until stopped */
  char address[64];    /* HOST:PORT */
  char public_key[65]; /* 64 hex digits */
} tracker_process;

/* Starts `program` with `argv` (null-terminated, argv[0] the program), its stderr into
 * `log_path`, and waits at most `timeout_s` for "listening on HOST:PORT as KEY". Returns 0 on
 * success; -1 (and the process stopped) otherwise, with the reason on stderr. */
int tracker_start(tracker_process* tracker, const char* program, char* const argv[],
                  const char* log_path, int timeout_s);

/* SIGTERM, then SIGKILL if it has not ended after `timeout_s`. Returns its exit status. */
int tracker_stop(tracker_process* tracker, int timeout_s);

#endif
